"""Pooling one quantity's samples over buffer placements: the figure is the median of the
per-placement medians, its spread is kept. Pure (numpy via graphcert.stats)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from graphcert.cert.results.figures import Ended, Timing, Unavailable
from graphcert.cert.results.measure import PlacementSpread
from graphcert.orderstats import median_interval
from graphcert.stats import summarize

# Worst first: a pooled figure ended as its worst placement did (unless the precision rule's
# target, which is the figure's own, is met: see pooled).
_ENDED_ORDER = (Ended.TIMEOUT, Ended.SAMPLE_CAP, Ended.NOISE_TARGET, Ended.PRECISION_TARGET)


@dataclass(frozen=True)
class Sampled:
    """One quantity's raw samples and how its sampling loop ended; `target`: the relative
    half-width the precision rule asked of it (None under the noise rule)."""

    samples: list[float]
    ended: Ended
    target: float | None = None

    def timing(self) -> Timing:
        return summarize(self.samples, self.ended)


def pooled(per_placement: Sequence[Sampled | Unavailable]
           ) -> tuple[Timing | Unavailable, PlacementSpread | None, list[float]]:
    """(figure, spread, all samples) of one quantity over placements.

    The figure's median is the median over placements of each placement's median, so no one
    placement's buffer luck decides it; its other statistics (spread, noise, min, max) are
    over all samples pooled, so the noise the gate compares with includes placement. Its
    half-width is that of [median of the placements' lower bounds, median of their upper
    bounds] (stats.median_interval): the median is monotone, so when every placement's
    interval holds its median this one holds the figure. Under the precision rule the
    figure ended on its target when its own half-width meets it (a placement that timed out
    still counted towards it); otherwise, as its worst placement ended. A quantity
    unavailable at any placement is unavailable (the first reason)."""
    for item in per_placement:
        if isinstance(item, Unavailable):
            return item, None, []
    sampled = [s for s in per_placement if isinstance(s, Sampled)]
    if not sampled:
        raise ValueError("no placements measured")
    spread = PlacementSpread(tuple(s.timing().median_s for s in sampled))
    everything = [x for s in sampled for x in s.samples]
    ended = next(e for e in _ENDED_ORDER if any(s.ended is e for s in sampled))
    bounds = [median_interval(s.samples) for s in sampled]
    low = statistics.median(b[0] for b in bounds)
    high = statistics.median(b[2] for b in bounds)
    mid = spread.median_s
    half = max(mid - low, high - mid) / mid if mid > 0 else math.inf
    targets = {s.target for s in sampled}
    target = targets.pop() if len(targets) == 1 else None
    if target is not None and half <= target:
        ended = Ended.PRECISION_TARGET
    figure = replace(summarize(everything, ended, half), median_s=mid)
    return figure, spread, everything


def pad_bytes(placement: int) -> int:
    """Bytes allocated before the workload's buffers at `placement` (0 for the first): whole
    2 MiB pages plus an odd 64 KiB step, so each placement moves every buffer to a new
    address and a new offset within the allocator's granule."""
    return placement * ((2 << 20) + (64 << 10))
