"""Statistics for timings: summaries, nvbench's noise rule, speedup intervals, line fits. Pure.

Each figure comes back as the typed value a result holds (graphcert.cert.results: `Timing`,
`Interval`, `LineFit`), so run code passes it on as it is, with no dict in between."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np

from graphcert.cert.results.figures import Ended, Interval, LineFit, Timing
from graphcert.jsontypes import Doc, JSONObject, as_float, as_int, as_opt_int, as_str
from graphcert.orderstats import median_interval

# The two stopping rules: "precision" (the default: the 95% interval of the median each loop
# reports is within the target of it) and "noise" (nvbench's stdrel rule: the samples'
# relative standard deviation within the target), kept for comparison with nvbench.
STOPPING_RULES = ("precision", "noise")
_NORMAL = NormalDist()


@dataclass(frozen=True)
class StopRule:
    """When a figure's sampling stops: its target met (after at least `min_samples` samples
    and `min_time_s` seconds), else its `timeout_s` (or a sample cap).

    `stopping="precision"`: the relative half-width of the 95% interval of the median
    (median_interval) within `max_noise` for figures read with the device's clock (device,
    hot), within `max_host_noise` for figures read with the host's clock (host enqueue, end
    to end), whose per-sample jitter on a shared host is inherent. `stopping="noise"`:
    nvbench's rule, relative standard deviation within `max_noise`, for either clock.
    `min_time_s` and `timeout_s` are per figure: a figure taken over several placements
    gives each loop its share (`shared`)."""

    max_noise: float = 0.005
    min_samples: int = 10
    min_time_s: float = 0.1
    timeout_s: float = 5.0
    max_samples: int | None = None  # a hard cap on samples; None: none (nvbench has none)
    stopping: str = "precision"
    max_host_noise: float = 0.02

    def __post_init__(self) -> None:
        if self.stopping not in STOPPING_RULES:
            raise ValueError(f"stopping must be one of {STOPPING_RULES}, not {self.stopping!r}")

    def target(self, host_clock: bool) -> float:
        """The precision (or noise) a loop must reach."""
        if self.stopping == "precision" and host_clock:
            return self.max_host_noise
        return self.max_noise

    def spread(self, samples: Sequence[float] | np.ndarray) -> float:
        """What the rule compares with its target: the median's relative half-width, or the
        relative standard deviation (inf until it can be computed)."""
        if self.stopping == "noise":
            return relative_stddev(samples)
        return median_half_width(samples)

    def ended(self, samples: Sequence[float], elapsed_s: float, host_clock: bool = False
              ) -> str | None:
        """Why sampling ends now ("precision_target", "noise_target", "timeout",
        "sample_cap"), or None to go on."""
        if len(samples) >= self.min_samples and elapsed_s >= self.min_time_s and \
                self.spread(samples) <= self.target(host_clock):
            return "precision_target" if self.stopping == "precision" else "noise_target"
        if elapsed_s >= self.timeout_s and len(samples) >= 2:
            return "timeout"
        if self.max_samples is not None and len(samples) >= self.max_samples:
            return "sample_cap"
        return None

    def done(self, samples: Sequence[float], elapsed_s: float, host_clock: bool = False) -> bool:
        return self.ended(samples, elapsed_s, host_clock) is not None

    def shared(self, loops: int) -> StopRule:
        """The rule for one of `loops` loops that together make one figure (placements):
        each gets its share of the figure's minimum time and timeout."""
        k = max(1, loops)
        return replace(self, min_time_s=self.min_time_s / k, timeout_s=self.timeout_s / k)

    def to_json(self) -> JSONObject:
        doc: JSONObject = {"max_noise": self.max_noise, "min_samples": self.min_samples,
                               "min_time_s": self.min_time_s, "timeout_s": self.timeout_s,
                               "stopping": self.stopping}
        if self.stopping == "precision":
            doc["max_host_noise"] = self.max_host_noise
        if self.max_samples is not None:
            doc["max_samples"] = self.max_samples
        return doc

    @classmethod
    def from_json(cls, doc: Doc) -> StopRule:
        # a rule recorded before "stopping" existed was the noise rule
        stopping = as_str(doc, "stopping") if "stopping" in doc else "noise"
        host_noise = (as_float(doc, "max_host_noise") if "max_host_noise" in doc
                      else cls.max_host_noise)
        return cls(as_float(doc, "max_noise"), as_int(doc, "min_samples"),
                   as_float(doc, "min_time_s"), as_float(doc, "timeout_s"),
                   as_opt_int(doc, "max_samples"), stopping, host_noise)


class Stopper:
    """One sampling loop's stopping check. The rule's spread costs O(n), so it is checked
    when the samples have grown by 5% since the last check (or the time is up): O(1) per
    sample on average, and a loop runs at most 5% past the sample that met its target."""

    def __init__(self, rule: StopRule, host_clock: bool):
        self.rule, self.host_clock = rule, host_clock
        self._next = rule.min_samples

    def ended(self, samples: Sequence[float], elapsed_s: float) -> str | None:
        rule = self.rule
        timed_out = elapsed_s >= rule.timeout_s and len(samples) >= 2
        capped = rule.max_samples is not None and len(samples) >= rule.max_samples
        if len(samples) < self._next and not timed_out and not capped:
            return None
        self._next = max(len(samples) + 1, math.ceil(len(samples) * 1.05))
        return rule.ended(samples, elapsed_s, self.host_clock)


def median_half_width(samples: Sequence[float] | np.ndarray) -> float:
    """The 95% interval of the median's larger half, relative to the median (inf when the
    median is not positive or there are too few samples to bound it)."""
    if len(samples) < 3:
        return math.inf
    low, med, high = median_interval(samples)
    return max(med - low, high - med) / med if med > 0 else math.inf


def relative_stddev(samples: Sequence[float] | np.ndarray) -> float:
    a = np.asarray(samples, dtype=np.float64)
    if a.size < 2:
        return math.inf
    mean = float(a.mean())
    return float(a.std(ddof=1)) / mean if mean > 0 else math.inf


def summarize(samples: Sequence[float], ended: Ended | None = None,
              half_width: float | None = None) -> Timing:
    """samples, median, mean, min, max, relative stddev, IQR; `noise` is the rel. stddev;
    `ended`: how the sampling loop stopped; `half_width`: the relative half-width of the
    95% interval of the median (by default these samples' own, median_half_width; None
    where too few samples bound it)."""
    a = np.asarray(samples, dtype=np.float64)
    if a.size == 0:
        raise ValueError("no samples")
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    rsd = relative_stddev(a)
    rsd = rsd if math.isfinite(rsd) else 0.0
    if half_width is None:
        half_width = median_half_width(a)
    return Timing(samples=int(a.size), median_s=float(med), mean_s=float(a.mean()),
                  min_s=float(a.min()), max_s=float(a.max()), rel_stddev=rsd,
                  iqr_s=float(q3 - q1), noise=rsd, ended=ended,
                  half_width=half_width if math.isfinite(half_width) else None)


# CUDA events resolve about half a microsecond: an elapsed time, the difference of two
# stamps, is off by less than one quantum. Host figures use perf_counter (ns) divided over
# many launches, so their quantum is negligible.
EVENT_QUANTUM_S = 0.5e-6
QUANTUM_S: dict[str, float] = {"device": EVENT_QUANTUM_S}


def median_of_medians(groups: Sequence[Sequence[float] | np.ndarray]) -> float:
    """The figure bench reports for samples taken in groups (placements): the median of
    each group's median, so no one group's luck decides it."""
    return float(np.median([np.median(np.asarray(g, np.float64)) for g in groups]))


def _block_medians(group: np.ndarray, blocks: int, resamples: int,
                   rng: np.random.Generator) -> np.ndarray:
    """Medians of `resamples` block-bootstrap copies of one group: its samples cut into
    `blocks` consecutive blocks of equal length (a remainder of fewer than `blocks` samples
    left out), drawn with replacement, so drift and correlation between neighbouring
    samples stay in each copy."""
    b = max(1, min(blocks, group.size))
    length = group.size // b
    cut = group[: b * length].reshape(b, length)
    picks = rng.integers(0, b, (resamples, b))
    out = np.empty(resamples)
    step = max(1, 4_000_000 // max(b * length, 1))  # bound the memory of one gather
    for i in range(0, resamples, step):
        out[i:i + step] = np.median(cut[picks[i:i + step]].reshape(-1, b * length), axis=1)
    return out


def speedup_interval(stream: Sequence[Sequence[float]], graph: Sequence[Sequence[float]], *,
                     quantum_s: float = 0.0, blocks: int = 10, resamples: int = 400,
                     confidence: float = 0.95, seed: int = 0) -> Interval:
    """Graph speedup: the ratio of the two figures bench reports (each the median of its
    groups' medians, see median_of_medians), with an interval of that same ratio.

    Each side's samples come in groups (placements; a framework step has one). The spread:
    a block bootstrap of the median of medians (consecutive blocks resampled within each
    group, see _block_medians), whose standard deviation in log space gives a symmetric
    interval around the log of the point, so the point lies strictly inside whenever the
    samples vary. The resolution: each bound is then widened as if either side's figure
    were off by `quantum_s` (one timer quantum, e.g. EVENT_QUANTUM_S for CUDA events), so
    samples the timer quantises to one value still give an interval. No bound is moved to
    meet the point: it is one estimator, one interval."""
    sides = [[np.asarray(g, np.float64) for g in side] for side in (stream, graph)]
    if any(not groups or any(g.size == 0 for g in groups) for groups in sides):
        raise ValueError("no samples")
    if quantum_s < 0 or not math.isfinite(quantum_s):
        raise ValueError(f"quantum_s must be a finite non-negative time, not {quantum_s}")
    rng = np.random.default_rng(seed)
    s_mid, g_mid = (median_of_medians(groups) for groups in sides)
    if s_mid <= 0 or g_mid <= 0:
        raise ValueError("a speedup needs positive times")
    median = s_mid / g_mid
    boots = [np.median(np.stack([_block_medians(g, blocks, resamples, rng) for g in groups]),
                       axis=0) for groups in sides]
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(boots[0] / boots[1])
    logs = logs[np.isfinite(logs)]
    sd = float(logs.std(ddof=1)) if logs.size > 1 else 0.0
    z = _NORMAL.inv_cdf(0.5 + confidence / 2)
    low, high = median * math.exp(-z * sd), median * math.exp(z * sd)
    # the ratio of two medians cannot pass the ratio of the samples' extremes
    s_min, g_min = (min(float(g.min()) for g in groups) for groups in sides)
    s_max, g_max = (max(float(g.max()) for g in groups) for groups in sides)
    low = max(low, s_min / g_max)
    high = min(high, s_max / g_min) if g_min > 0 else high
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
