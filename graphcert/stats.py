"""Statistics for timings: summaries, nvbench's noise rule, speedup intervals, line fits. Pure."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


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


def relative_stddev(samples: Sequence[float] | np.ndarray) -> float:
    a = np.asarray(samples, dtype=np.float64)
    if a.size < 2:
        return math.inf
    mean = float(a.mean())
    return float(a.std(ddof=1)) / mean if mean > 0 else math.inf


def summarize(samples: Sequence[float]) -> dict[str, Any]:
    """samples, median, mean, min, max, relative stddev, IQR; `noise` is the rel. stddev."""
    a = np.asarray(samples, dtype=np.float64)
    if a.size == 0:
        raise ValueError("no samples")
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    rsd = relative_stddev(a)
    rsd = rsd if math.isfinite(rsd) else 0.0
    return {"samples": int(a.size), "median_s": float(med), "mean_s": float(a.mean()),
            "min_s": float(a.min()), "max_s": float(a.max()), "rel_stddev": rsd,
            "iqr_s": float(q3 - q1), "noise": rsd}


def speedup_interval(stream: Sequence[float], graph: Sequence[float], *, resamples: int = 2000,
                     confidence: float = 0.95, seed: int = 0) -> dict[str, float]:
    """Graph speedup = median(stream) / median(graph), with a bootstrap interval of that
    ratio (both sample sets resampled independently)."""
    s, g = np.asarray(stream, np.float64), np.asarray(graph, np.float64)
    rng = np.random.default_rng(seed)
    s_med = np.median(s[rng.integers(0, s.size, (resamples, s.size))], axis=1)
    g_med = np.median(g[rng.integers(0, g.size, (resamples, g.size))], axis=1)
    ratios = s_med / g_med
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return {"median": float(np.median(s) / np.median(g)), "low": float(low),
            "high": float(high), "confidence": confidence}


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> dict[str, float]:
    """Least squares y = a + b*x, with R^2."""
    x, y = np.asarray(xs, np.float64), np.asarray(ys, np.float64)
    if x.size < 2:
        raise ValueError("a line needs two points")
    b, a = np.polyfit(x, y, 1)
    pred = a + b * x
    ss_res = float(((y - pred) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    return {"a_s": float(a), "b_s": float(b), "r2": 1 - ss_res / ss_tot if ss_tot else 1.0}
