"""The 95% interval of a median from two order statistics (distribution-free, widened for
dependent samples). Pure: numpy and the standard library only, at the base of the layers so
both graphcert.stats (bench's figures) and the profile analysis (graphcert.profile, below
graphcert.stats) use this one definition."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

_NORMAL = NormalDist()


def median_interval(samples: Sequence[float] | np.ndarray, confidence: float = 0.95
                    ) -> tuple[float, float, float]:
    """(low, median, high): a distribution-free interval of the median from two order
    statistics, its rank window widened for dependence between neighbouring samples.

    For n independent samples the ranks n/2 -+ z*sqrt(n)/2 bound the median with the given
    confidence whatever the distribution (heavy tails included). Timings are not
    independent (a host's state drifts), so the window uses the effective sample size
    n(1 - r)/(1 + r), r the lag-1 autocorrelation of the indicator "sample above the
    median": the series whose mean decides where the median falls."""
    a = np.asarray(samples, dtype=np.float64)
    n = a.size
    if n == 0:
        raise ValueError("no samples")
    med = float(np.median(a))
    if n < 3:
        return float(a.min()), med, float(a.max())
    above = (a > med).astype(np.float64)
    x = above - above.mean()
    denom = float((x * x).sum())
    r = float((x[1:] * x[:-1]).sum()) / denom if denom > 0 else 0.0
    r = min(max(r, 0.0), 0.99)
    n_eff = max(n * (1 - r) / (1 + r), 1.0)
    z = _NORMAL.inv_cdf(0.5 + confidence / 2)
    half = z * n / (2 * math.sqrt(n_eff))
    lo = max(0, math.floor(n / 2 - half))
    hi = min(n - 1, math.ceil(n / 2 + half))
    part = np.partition(a, (lo, hi))
    return float(part[lo]), med, float(part[hi])
