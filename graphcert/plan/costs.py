"""What a bucket costs, and what a bucket list may spend. Pure.

A `CostPoint` holds one candidate size's figures: the device time of one replay of the graph
captured at that size, the device time of one eager step of that size (what a batch above
the largest bucket costs), the capture + instantiate seconds and the graph's pool bytes. A
`CostCurve` is the points of one step, ascending; sizes between two points are interpolated
linearly and marked so (`measured` False), never extrapolated.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

from graphcert.errors import InputError

# Seconds summed in another order can differ in the last bit; a list whose capture time is
# within a nanosecond of the budget fits, so the order of a sum never flips the answer.
CAPTURE_SLACK_S = 1e-9


def _seconds(value: float, what: str, where: str) -> float:
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or value < 0):
        raise InputError(f"{where}: {what} is {value!r}", hint="times are finite seconds >= 0")
    return float(value)


def _whole(value: int, what: str, where: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InputError(f"{where}: {what} is {value!r}", hint=f"give an integer >= {least}")
    return value


@dataclass(frozen=True)
class CostPoint:
    """One bucket size's costs, measured or interpolated between two measured neighbours."""

    size: int
    replay_s: float  # device time of one replay of the graph captured at `size`
    eager_s: float  # device time of one eager step of `size` (no graph)
    capture_s: float  # capture + instantiate of the graph at `size`
    pool_bytes: int  # the graph's memory pool
    measured: bool = True

    def __post_init__(self) -> None:
        where = f"cost point at size {self.size!r}"
        _whole(self.size, "the size", where, 1)
        _whole(self.pool_bytes, "pool_bytes", where, 0)
        for name in ("replay_s", "eager_s", "capture_s"):
            object.__setattr__(self, name, _seconds(getattr(self, name), name, where))


def _between(lo: CostPoint, hi: CostPoint, size: int) -> CostPoint:
    """The linear interpolation at lo.size < size < hi.size; pool bytes rounded up, so an
    interpolated graph never looks smaller than its neighbours make it."""
    w = (size - lo.size) / (hi.size - lo.size)

    def mix(a: float, b: float) -> float:
        return a + (b - a) * w

    return CostPoint(size, mix(lo.replay_s, hi.replay_s), mix(lo.eager_s, hi.eager_s),
                     mix(lo.capture_s, hi.capture_s),
                     math.ceil(mix(lo.pool_bytes, hi.pool_bytes)), measured=False)


@dataclass(frozen=True)
class CostCurve:
    """One step's cost points, sizes strictly ascending."""

    points: tuple[CostPoint, ...]

    def __post_init__(self) -> None:
        if not self.points:
            raise InputError("the cost curve has no point", hint="measure at least one size")
        for prev, cur in zip(self.points, self.points[1:], strict=False):
            if cur.size <= prev.size:
                raise InputError(f"the cost curve's sizes are not ascending ({prev.size:,} "
                                 f"then {cur.size:,})", hint="give each size once, ascending")

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(p.size for p in self.points)

    def at(self, size: int) -> CostPoint:
        """The point at `size`: its own, or interpolated between its two neighbours.
        InputError outside the measured range (no extrapolation)."""
        sizes = self.sizes
        i = bisect.bisect_left(sizes, size)
        if i < len(sizes) and sizes[i] == size:
            return self.points[i]
        if i == 0 or i == len(sizes):
            raise InputError(f"size {size:,} is outside the cost curve ({sizes[0]:,} to "
                             f"{sizes[-1]:,})",
                             hint="measure the step up to that size, or lower max_size")
        return _between(self.points[i - 1], self.points[i], size)


@dataclass(frozen=True)
class Budgets:
    """What a bucket list may spend; None is no limit. Memory is the graphs' pool bytes
    summed (an engine sharing one pool across graphs needs less: the sum is an upper bound)."""

    max_graphs: int | None = None
    memory_budget: int | None = None  # bytes
    capture_budget: float | None = None  # seconds, capture + instantiate summed
    max_size: int | None = None  # the largest bucket, and the largest batch the traffic may hold

    def __post_init__(self) -> None:
        if self.max_graphs is not None:
            _whole(self.max_graphs, "max_graphs", "budgets", 1)
        if self.memory_budget is not None:
            _whole(self.memory_budget, "memory_budget", "budgets", 0)
        if self.capture_budget is not None:
            object.__setattr__(self, "capture_budget",
                               _seconds(self.capture_budget, "capture_budget", "budgets"))
        if self.max_size is not None:
            _whole(self.max_size, "max_size", "budgets", 1)

    def broken(self, buckets: Sequence[int], memory: int, capture: float) -> tuple[str, ...]:
        """Each budget a list with these totals breaks, as a short phrase (none: it fits)."""
        out = []
        if self.max_graphs is not None and len(buckets) > self.max_graphs:
            out.append(f"{len(buckets)} graphs > max_graphs {self.max_graphs}")
        if self.memory_budget is not None and memory > self.memory_budget:
            out.append(f"{memory:,} pool bytes > memory budget {self.memory_budget:,}")
        if (self.capture_budget is not None
                and capture > self.capture_budget + CAPTURE_SLACK_S):
            out.append(f"{capture:.3g} s capture > capture budget {self.capture_budget:.3g} s")
        if self.max_size is not None and buckets and buckets[-1] > self.max_size:
            out.append(f"bucket {buckets[-1]:,} > max_size {self.max_size:,}")
        return tuple(out)
