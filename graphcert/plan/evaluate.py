"""What a bucket list costs over a traffic mix: a plan's figures, a preset's, a user's list.
Pure.

Each batch of size n is served by the smallest bucket >= n, padded up to it, at that bucket's
replay time; a batch above the largest bucket runs eager at its own eager time. Figures are
expectations per step over the traffic's shares.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from graphcert.buckets import parse_buckets
from graphcert.errors import InputError
from graphcert.plan.costs import Budgets, CostCurve
from graphcert.plan.traffic import Traffic


@dataclass(frozen=True)
class Evaluation:
    """A bucket list's figures over one traffic mix, on one cost curve."""

    label: str  # what the list was called: "plan", "vllm:512", "1,2,4,8"
    buckets: tuple[int, ...]
    expected_s: float  # expected device time per step
    padded_rows: float  # expected padded rows per step (bucket - n, graph-served steps only)
    padded_fraction: float  # of the rows graphs compute, the share that is padding
    eager_share: float  # share of steps above the largest bucket, run eager
    memory_bytes: int  # graph pools summed
    capture_s: float  # capture + instantiate summed
    interpolated: tuple[int, ...]  # sizes whose figures used here were interpolated
    over_budget: tuple[str, ...]  # each budget the list breaks (empty: it fits)

    @property
    def graphs(self) -> int:
        return len(self.buckets)

    @property
    def fits(self) -> bool:
        return not self.over_budget


def check_traffic(traffic: Traffic, curve: CostCurve, budgets: Budgets) -> None:
    """The traffic must lie within max_size and within the curve (every size's eager time
    is needed: any list may leave it above its largest bucket)."""
    if budgets.max_size is not None and traffic.largest > budgets.max_size:
        raise InputError(f"{traffic.source}: size {traffic.largest:,} is above max_size "
                         f"{budgets.max_size:,}", hint="raise max_size or drop those batches")
    for size in (traffic.sizes[0], traffic.largest):
        curve.at(size)  # InputError when outside the measured range


def bucket_list(buckets: str | Sequence[int]) -> tuple[str, tuple[int, ...]]:
    """A list's label and its buckets: text (`1,2,4,8`, `vllm:512`, `1..256`) through
    graphcert.buckets.parse_buckets, or sizes already ascending, distinct and >= 1."""
    if isinstance(buckets, str):
        parsed = parse_buckets(buckets)
        return parsed.text, parsed.capacities
    values = tuple(buckets)
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"bucket {value!r} is not a batch size",
                             hint="buckets are integers >= 1")
    for prev, cur in zip(values, values[1:], strict=False):
        if cur <= prev:
            raise InputError(f"bucket list is not ascending ({prev:,} then {cur:,})",
                             hint="list each bucket once, smallest first")
    return ",".join(map(str, values)), values


def evaluate(buckets: str | Sequence[int], traffic: Traffic, curve: CostCurve,
             budgets: Budgets | None = None, *, label: str | None = None) -> Evaluation:
    """The figures of `buckets` (a list, or a preset such as `vllm:512`) over `traffic`.

    InputError when the traffic or a bucket lies outside the curve (no extrapolation)."""
    budgets = budgets or Budgets()
    check_traffic(traffic, curve, budgets)
    name, sizes = bucket_list(buckets)
    points = [curve.at(b) for b in sizes]
    interpolated = {p.size for p in points if not p.measured}
    time = 0.0
    padded = launched = eager = 0  # rows and steps, summed over the counts: exact
    i = 0
    for size, count in zip(traffic.sizes, traffic.counts, strict=True):
        while i < len(sizes) and sizes[i] < size:
            i += 1
        if i < len(sizes):  # served by bucket i, padded to it
            time += count * points[i].replay_s
            padded += count * (sizes[i] - size)
            launched += count * sizes[i]
        else:
            point = curve.at(size)
            time += count * point.eager_s
            eager += count
            if not point.measured:
                interpolated.add(size)
    memory = sum(p.pool_bytes for p in points)
    capture = math.fsum(p.capture_s for p in points)
    total = traffic.total
    return Evaluation(label or name, sizes, time / total, padded / total,
                      padded / launched if launched else 0.0, eager / total, memory, capture,
                      tuple(sorted(interpolated)),
                      budgets.broken(sizes, memory, capture))
