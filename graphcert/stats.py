"""Statistics for timings: summaries, nvbench's noise rule, speedup intervals, line fits. Pure.

Each figure comes back as the typed value a result holds (graphcert.cert.results: `Timing`,
`Interval`, `LineFit`), so run code passes it on as it is, with no dict in between."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphcert.cert.results import Ended, Interval, LineFit, Timing


@dataclass(frozen=True)
class StopRule:
    """nvbench's defaults: noise (relative standard deviation) <= 0.5%, at least 10 samples
    and 0.5 s of measurement; a timeout ends a noisy measurement anyway."""

    max_noise: float = 0.005
    min_samples: int = 10
    min_time_s: float = 0.5
    timeout_s: float = 5.0
    max_samples: int | None = None  # a hard cap on samples; None: none (nvbench has none)

    def ended(self, samples: Sequence[float], elapsed_s: float) -> str | None:
        """Why sampling ends now ("noise_target", "timeout", "sample_cap"), or None to go on."""
        if len(samples) >= self.min_samples and elapsed_s >= self.min_time_s and \
                relative_stddev(samples) <= self.max_noise:
            return "noise_target"
        if elapsed_s >= self.timeout_s and len(samples) >= 2:
            return "timeout"
        if self.max_samples is not None and len(samples) >= self.max_samples:
            return "sample_cap"
        return None

    def done(self, samples: Sequence[float], elapsed_s: float) -> bool:
        return self.ended(samples, elapsed_s) is not None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"max_noise": self.max_noise, "min_samples": self.min_samples,
                               "min_time_s": self.min_time_s, "timeout_s": self.timeout_s}
        if self.max_samples is not None:
            doc["max_samples"] = self.max_samples
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> StopRule:
        cap = doc.get("max_samples")
        return cls(float(doc["max_noise"]), int(doc["min_samples"]), float(doc["min_time_s"]),
                   float(doc["timeout_s"]), int(cap) if cap is not None else None)


def relative_stddev(samples: Sequence[float] | np.ndarray) -> float:
    a = np.asarray(samples, dtype=np.float64)
    if a.size < 2:
        return math.inf
    mean = float(a.mean())
    return float(a.std(ddof=1)) / mean if mean > 0 else math.inf


def summarize(samples: Sequence[float], ended: Ended | None = None) -> Timing:
    """samples, median, mean, min, max, relative stddev, IQR; `noise` is the rel. stddev;
    `ended`: how the sampling loop stopped."""
    a = np.asarray(samples, dtype=np.float64)
    if a.size == 0:
        raise ValueError("no samples")
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    rsd = relative_stddev(a)
    rsd = rsd if math.isfinite(rsd) else 0.0
    return Timing(samples=int(a.size), median_s=float(med), mean_s=float(a.mean()),
                  min_s=float(a.min()), max_s=float(a.max()), rel_stddev=rsd,
                  iqr_s=float(q3 - q1), noise=rsd, ended=ended)


# CUDA events resolve about half a microsecond: an elapsed time, the difference of two
# stamps, is off by less than one quantum. Host figures use perf_counter (ns) divided over
# many launches, so their quantum is negligible.
EVENT_QUANTUM_S = 0.5e-6
QUANTUM_S: dict[str, float] = {"device": EVENT_QUANTUM_S}


def batch_means(samples: np.ndarray, batches: int) -> np.ndarray:
    """Means of `batches` consecutive runs of samples (sizes differ by at most one):
    averages are not quantised like single samples, and consecutive batching keeps drift
    and correlation between neighbouring samples in the spread."""
    k = max(1, min(batches, samples.size))
    return np.array([chunk.mean() for chunk in np.array_split(samples, k)])


def speedup_interval(stream: Sequence[float], graph: Sequence[float], *,
                     quantum_s: float = 0.0, batches: int = 20, resamples: int = 2000,
                     confidence: float = 0.95, seed: int = 0) -> Interval:
    """Graph speedup = median(stream) / median(graph), with an interval that reflects the
    samples' spread and the timer's resolution.

    The spread: a bootstrap of the ratio of batch means (each side's consecutive batch
    means resampled independently). A bootstrap of medians collapses to a point when the
    timer quantises every sample to the same value; batch means do not. The resolution:
    each bound is then widened as if either side's central time were off by `quantum_s`
    (one timer quantum, e.g. EVENT_QUANTUM_S for CUDA events). The interval always holds
    the reported median ratio.
    """
    s, g = np.asarray(stream, np.float64), np.asarray(graph, np.float64)
    if s.size == 0 or g.size == 0:
        raise ValueError("no samples")
    if quantum_s < 0 or not math.isfinite(quantum_s):
        raise ValueError(f"quantum_s must be a finite non-negative time, not {quantum_s}")
    rng = np.random.default_rng(seed)
    sb, gb = batch_means(s, batches), batch_means(g, batches)
    s_boot = sb[rng.integers(0, sb.size, (resamples, sb.size))].mean(axis=1)
    g_boot = gb[rng.integers(0, gb.size, (resamples, gb.size))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(s_boot / g_boot, [tail, 100 - tail])
    s_mid, g_mid = float(np.median(s)), float(np.median(g))
    median = s_mid / g_mid
    low, high = min(float(low), median), max(float(high), median)
    if quantum_s > 0:
        low *= max(s_mid - quantum_s, 0.0) / s_mid * g_mid / (g_mid + quantum_s)
        # a graph time within one quantum of zero is bounded by half a quantum (JSON has
        # no infinity; such a figure is below what the timer resolves anyway)
        high *= (s_mid + quantum_s) / s_mid * g_mid / max(g_mid - quantum_s, quantum_s / 2)
    return Interval(median=median, low=float(low), high=float(high), confidence=confidence)


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> LineFit:
    """Least squares y = a + b*x, with R^2."""
    x, y = np.asarray(xs, np.float64), np.asarray(ys, np.float64)
    if x.size < 2:
        raise ValueError("a line needs two points")
    b, a = np.polyfit(x, y, 1)
    pred = a + b * x
    ss_res = float(((y - pred) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    return LineFit(a_s=float(a), b_s=float(b), r2=1 - ss_res / ss_tot if ss_tot else 1.0)
