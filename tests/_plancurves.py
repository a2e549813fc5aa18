"""Synthetic cost curves and traffic for the planner's tests: made up here, never measured.

`reference_time` and `brute_force` are the planner's oracle: they share no code with
graphcert.plan.optimise or graphcert.plan.evaluate (only `CostCurve.at` for an eager time,
whose interpolation is tested on its own)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations

from hypothesis import strategies as st

from graphcert.plan.costs import Budgets, CostCurve, CostPoint

US = 1e-6


def curve_of(rows: Sequence[tuple[int, float, float, float, int]]) -> CostCurve:
    """A synthetic curve from (size, replay_us, eager_us, capture_s, pool_bytes) rows."""
    return CostCurve(tuple(CostPoint(s, r * US, e * US, c, b) for s, r, e, c, b in rows))


def reference_time(buckets: Sequence[int], counts: Mapping[int, int], curve: CostCurve) -> float:
    """Expected seconds per step, the slow way: each size's smallest bucket >= it, else eager."""
    total = sum(counts.values())
    time = 0.0
    for size, count in counts.items():
        served = [b for b in buckets if b >= size]
        cost = curve.at(min(served)).replay_s if served else curve.at(size).eager_s
        time += count * cost
    return time / total


def keeps(buckets: Sequence[int], curve: CostCurve, budgets: Budgets) -> bool:
    """Whether a list keeps every budget (summed the slow way)."""
    return _keeps_points(buckets, [curve.at(b) for b in buckets], budgets)


def keeping_lists(candidates: Sequence[int], counts: Mapping[int, int], curve: CostCurve,
                  budgets: Budgets) -> Iterator[tuple[tuple[int, ...], float]]:
    """Every subset of the candidates that keeps the budgets (the empty list, all eager,
    included), with its expected time: the same sums as `keeps` and `reference_time`, from
    each size's point looked up once (the property tests run this for hundreds of problems
    of up to 1,024 subsets each)."""
    point = {b: curve.at(b) for b in candidates}
    eager = {size: curve.at(size).eager_s for size in counts}
    total = sum(counts.values())
    for r in range(len(candidates) + 1):
        for subset in combinations(sorted(candidates), r):
            if not _keeps_points(subset, [point[b] for b in subset], budgets):
                continue
            time = 0.0
            for size, count in counts.items():
                served = [b for b in subset if b >= size]
                time += count * (point[min(served)].replay_s if served else eager[size])
            yield subset, time / total


def _keeps_points(buckets: Sequence[int], points: Sequence[CostPoint], budgets: Budgets) -> bool:
    return ((budgets.max_graphs is None or len(buckets) <= budgets.max_graphs)
            and (budgets.memory_budget is None
                 or sum(p.pool_bytes for p in points) <= budgets.memory_budget)
            and (budgets.capture_budget is None
                 or sum(p.capture_s for p in points) <= budgets.capture_budget + 1e-9)
            and (budgets.max_size is None or not buckets or buckets[-1] <= budgets.max_size))


def brute_force(candidates: Sequence[int], counts: Mapping[int, int], curve: CostCurve,
                budgets: Budgets) -> tuple[float, tuple[int, ...]]:
    """The best expected time over every subset of the candidates that keeps the budgets
    (the empty list, all eager, included), and one list reaching it."""
    best: tuple[float, tuple[int, ...]] | None = None
    for subset, t in keeping_lists(candidates, counts, curve, budgets):
        if best is None or t < best[0]:
            best = (t, subset)
    assert best is not None  # the empty list always keeps the budgets
    return best


@st.composite
def problems(draw: st.DrawFn, max_candidates: int = 10, *, tight: bool = False
             ) -> tuple[CostCurve, dict[int, int], Budgets]:
    """A synthetic curve (every point a candidate), traffic within it, and budgets: each
    budget absent or anywhere from nothing to everything (`tight`: only a memory budget,
    a quarter to three quarters of all pools, so frontiers grow). Capture seconds are
    multiples of 1/8, so their sums are exact whatever the order."""
    sizes = sorted(draw(st.sets(st.integers(1, 40), min_size=6 if tight else 1,
                                max_size=max_candidates)))
    rows = [(s, draw(st.integers(1, 200)), draw(st.integers(1, 300)),
             draw(st.integers(0, 32)) / 8, draw(st.integers(0, 64)) << 20) for s in sizes]
    curve = curve_of(rows)
    within = st.integers(sizes[0], sizes[-1])
    counts = draw(st.dictionaries(within, st.integers(1, 1000), min_size=1, max_size=12))
    pools = sum(r[4] for r in rows)
    if tight:
        return curve, counts, Budgets(memory_budget=draw(st.integers(pools // 4,
                                                                     3 * pools // 4)))
    captures = sum(r[3] for r in rows)
    budgets = Budgets(
        max_graphs=draw(st.none() | st.integers(1, len(sizes) + 1)),
        memory_budget=draw(st.none() | st.integers(0, pools)),
        capture_budget=draw(st.none() | st.integers(0, int(captures * 8)).map(lambda k: k / 8)),
        max_size=draw(st.none() | st.integers(max(counts), sizes[-1] + 5)))
    return curve, counts, budgets
