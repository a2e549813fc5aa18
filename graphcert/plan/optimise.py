"""The bucket list that minimises the expected device time per step under the budgets. Pure
(numpy).

Candidates c_1 < ... < c_m; a bucket list is an ascending choice of them. A list's expected
time splits into one term per bucket (the traffic's share in (previous bucket, bucket] times
that bucket's replay time) plus the eager time of the sizes above its largest bucket, so the
best lists ending at c_j extend lists ending below it: dynamic programming over the sorted
candidates. Every budget that can bind is a dimension of the search: each candidate keeps
the labels (time so far, graphs, pool bytes, capture seconds) that no other label ending
there beats in time and in every binding dimension, its Pareto frontier. Dropping only
dominated labels keeps the search exact, and so does leaving out a candidate that serves no
traffic size or that another serving the same sizes beats on every cost. A budget that
cannot bind (max_graphs at least the number of candidates; a memory or capture budget that
the costliest allowed list still keeps) is no dimension, so with none each candidate keeps
one label. A frontier that grows past `max_labels` is thinned to that many labels evenly
spaced by time: the answer still keeps the budgets, but it is no longer proven the best.
The plan then says so, and gives the exact optimum without the memory and capture budgets
as a bound.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np
import numpy.typing as npt

from graphcert.errors import InputError
from graphcert.plan.costs import CAPTURE_SLACK_S, Budgets, CostCurve, CostPoint
from graphcert.plan.evaluate import Evaluation, bucket_list, check_traffic, evaluate
from graphcert.plan.traffic import Traffic

# Labels one candidate may keep. Realistic curves (a few dozen candidates, one budget
# binding) stay far below it; a larger frontier costs time quadratically.
MAX_LABELS = 256
_TIE = 1e-9  # lists within this relative time of the best count as tied: fewer graphs win
# The default tolerance of `choose`: lists within it of the best count as tied and the one with
# the fewest graphs wins, since a bucket that buys less than the precision its figures were
# measured to (bench's 0.5% device-clock target) buys noise. 0 asks for the strict optimum.
TOLERANCE = 0.005
_DIMS = ("graphs", "memory", "capture")
_BLOCK = 256  # labels compared with each other at once (d >= 2)
_CHUNK = 4096  # later labels compared with a block's winners at once
_Floats = npt.NDArray[np.float64]
_Indices = npt.NDArray[np.intp]


class Method(Enum):
    """How the plan's list was found."""

    EXACT = "exact dynamic programming"
    THINNED = "dynamic programming on thinned frontiers (not exact)"


@dataclass(frozen=True)
class Plan:
    """The chosen bucket list with its figures, how it was found and why."""

    chosen: Evaluation  # the list and its figures (label "plan")
    method: Method
    why: str  # the budgets that bound the search, its size, what was thinned
    candidates: tuple[int, ...]  # the sizes considered (those within max_size)
    budgets: Budgets
    lower_bound_s: float | None = None  # thinned: no list within the budgets beats this
    tolerance: float = 0.0  # lists within this of the best counted as tied (fewest graphs won)

    @property
    def exact(self) -> bool:
        return self.method is Method.EXACT


@dataclass(frozen=True)
class Infeasible:
    """No bucket fits the budgets: the reason, one line."""

    reason: str

    def error(self) -> InputError:
        return InputError(self.reason, hint="raise the budget or leave it out")


@dataclass(frozen=True)
class _Problem:
    """The candidates' costs and the traffic's cumulative figures, as arrays."""

    sizes: npt.NDArray[np.int64]  # candidate sizes, ascending
    replay: _Floats  # replay seconds per candidate
    need: _Floats  # (m, 3): graphs (1), pool bytes, capture seconds per candidate
    below: _Floats  # traffic share at sizes <= candidate
    tail: _Floats  # expected eager seconds of the sizes > candidate
    all_eager: float  # expected seconds with no graph


@dataclass(frozen=True)
class _Found:
    buckets: tuple[int, ...]
    expected_s: float
    exact: bool
    widest: int  # the largest frontier before thinning
    thinned_at: int | None  # the first candidate whose frontier was thinned


def _problem(points: Sequence[CostPoint], traffic: Traffic, curve: CostCurve) -> _Problem:
    sizes = np.array(traffic.sizes, dtype=np.int64)
    share = np.array(traffic.shares())
    eager = np.array([curve.at(s).eager_s for s in traffic.sizes])
    cum_share = np.concatenate(([0.0], np.cumsum(share)))
    cum_eager = np.concatenate(([0.0], np.cumsum(share * eager)))
    cand = np.array([p.size for p in points], dtype=np.int64)
    upto = np.searchsorted(sizes, cand, side="right")
    need = np.array([(1.0, float(p.pool_bytes), p.capture_s) for p in points],
                    dtype=np.float64).reshape(-1, 3)
    replay = np.array([p.replay_s for p in points], dtype=np.float64)
    return _Problem(cand, replay, need, cum_share[upto], cum_eager[-1] - cum_eager[upto],
                    float(cum_eager[-1]))


def _useful(points: Sequence[CostPoint], traffic: Traffic) -> list[CostPoint]:
    """The candidates worth searching: a bucket serves the traffic sizes between the bucket
    below it and itself, so candidates with the same traffic sizes at or below them are
    interchangeable, and one beaten in replay time, pool bytes and capture time by another of
    them is never needed (exact: swap it for the other); one below every traffic size serves
    nothing."""
    groups: dict[int, list[CostPoint]] = {}
    for q in points:
        upto = bisect.bisect_right(traffic.sizes, q.size)
        if upto:
            groups.setdefault(upto, []).append(q)
    out: list[CostPoint] = []
    for group in groups.values():
        kept: list[CostPoint] = []
        for q in sorted(group, key=lambda q: (_figures(q), q.size)):
            if not any(all(a <= b for a, b in zip(_figures(k), _figures(q), strict=True))
                       for k in kept):  # sorted: a kept one never needs more of all three
                kept.append(q)
        out += kept
    return sorted(out, key=lambda q: q.size)


def _figures(q: CostPoint) -> tuple[float, int, float]:
    return q.replay_s, q.pool_bytes, q.capture_s


def _frontier(cost: _Floats, res: _Floats) -> _Indices:
    """Indices of the labels no other beats in cost and in every column of `res`, in cost
    order (of equal labels, the first)."""
    d = res.shape[1]
    order: _Indices = np.lexsort((*(res[:, k] for k in reversed(range(d))), cost))
    if d == 0:
        return order[:1]
    if d == 1:  # kept: a resource below every label before it in cost order
        r = res[order, 0]
        before = np.concatenate(([np.inf], np.minimum.accumulate(r)[:-1]))
        kept_1d: _Indices = order[r < before]
        return kept_1d
    # Blocks in cost order: a block's labels no earlier block member beats are kept, and
    # every later label one of them beats is dropped (vectorised; a label's own block and the
    # kept labels before it cover every label before it, dominance being transitive).
    res = res[order]
    alive = np.ones(len(order), dtype=bool)
    out: list[_Indices] = []
    start = 0
    while start < len(order):
        block = start + np.flatnonzero(alive[start:])[:_BLOCK]
        if not block.size:
            break
        here = res[block]
        beaten = np.triu(np.all(here[:, None, :] <= here[None, :, :], axis=2), 1).any(axis=0)
        won = block[~beaten]
        out.append(won)
        start = int(block[-1]) + 1
        for lo in range(start, len(order), _CHUNK):
            rows = lo + np.flatnonzero(alive[lo:lo + _CHUNK])
            hit = np.all(res[won][None, :, :] <= res[rows][:, None, :], axis=2).any(axis=1)
            alive[rows[hit]] = False
    kept: _Indices = order[np.concatenate(out)]
    return kept


def _search(p: _Problem, limits: _Floats, dims: Sequence[int], max_labels: int,
            tie: float = _TIE) -> _Found:
    """The best list whose totals stay within `limits` (graphs, bytes, seconds; inf for
    none); `dims` the binding ones, which the frontiers keep. Lists within `tie` (relative)
    of the best time are tied: the fewest graphs win, then the least time (with graphs in
    `dims` the frontiers keep the best list of every graph count, so this stays exact)."""
    cost, below = np.zeros(1), np.zeros(1)
    used = np.zeros((1, 3))
    parent, state = np.array([-1]), np.array([-1])
    widest, thinned_at = 1, None
    cols = list(dims)
    for j in range(len(p.sizes)):
        totals = used + p.need[j]
        fit = np.flatnonzero(np.all(totals <= limits, axis=1))
        if not fit.size:
            continue
        new = cost[fit] + p.replay[j] * (p.below[j] - below[fit])
        keep = _frontier(new, totals[fit][:, cols])
        widest = max(widest, len(keep))
        if len(keep) > max_labels:
            thinned_at = thinned_at or int(p.sizes[j])
            keep = keep[np.unique(np.linspace(0, len(keep) - 1, max_labels).round()
                                  .astype(np.intp))]
        cost = np.concatenate((cost, new[keep]))
        below = np.concatenate((below, np.full(len(keep), p.below[j])))
        used = np.concatenate((used, totals[fit[keep]]))
        parent = np.concatenate((parent, fit[keep]))
        state = np.concatenate((state, np.full(len(keep), j)))
    final = cost + np.append(p.tail, p.all_eager)[state]  # state -1 (no graph): all eager
    best = float(final.min())
    tied = np.flatnonzero(final <= best + max(tie, _TIE) * abs(best))
    pick = int(tied[np.lexsort((used[tied, 2], used[tied, 1], final[tied], used[tied, 0]))[0]])
    picked_s = float(final[pick])
    chain = []
    while pick > 0:
        chain.append(int(p.sizes[state[pick]]))
        pick = int(parent[pick])
    return _Found(tuple(reversed(chain)), picked_s, thinned_at is None, widest, thinned_at)


def _limits(budgets: Budgets, *, resources: bool = True) -> _Floats:
    cap = budgets.capture_budget
    return np.array([
        np.inf if budgets.max_graphs is None else budgets.max_graphs,
        np.inf if budgets.memory_budget is None or not resources else budgets.memory_budget,
        np.inf if cap is None or not resources else cap + CAPTURE_SLACK_S])


def _binding(p: _Problem, budgets: Budgets) -> tuple[list[int], list[str]]:
    """The budgets that can bind (as columns of `need`), and a phrase for each budget set."""
    m = len(p.sizes)
    most = m if budgets.max_graphs is None else min(budgets.max_graphs, m)
    dims, notes = [], []
    if budgets.max_graphs is not None:
        binds = budgets.max_graphs < m
        notes.append(f"max_graphs {budgets.max_graphs} {'binds' if binds else 'never binds'}")
        dims += [0] if binds else []
    limits = _limits(budgets)
    for col, name, unit in ((1, "memory", "bytes"), (2, "capture", "s")):
        if not np.isfinite(limits[col]):
            continue
        worst = float(np.sort(p.need[:, col])[::-1][:most].sum())
        binds = worst > limits[col]
        shown = f"{worst:,.0f} {unit}" if col == 1 else f"{worst:.3g} {unit}"
        notes.append(f"the {name} budget {'binds' if binds else 'never binds'} (the "
                     f"{most} costliest candidate(s) need {shown})")
        dims += [col] if binds else []
    return dims, notes


def _nothing_fits(points: Sequence[CostPoint], budgets: Budgets) -> str:
    parts = []
    if budgets.memory_budget is not None:
        small = min(points, key=lambda q: q.pool_bytes)
        if small.pool_bytes > budgets.memory_budget:
            parts.append(f"the smallest graph pool is {small.pool_bytes:,} bytes (bucket "
                         f"{small.size:,}), above the memory budget {budgets.memory_budget:,}")
    if budgets.capture_budget is not None:
        fast = min(points, key=lambda q: q.capture_s)
        if fast.capture_s > budgets.capture_budget + CAPTURE_SLACK_S:
            parts.append(f"the quickest capture takes {fast.capture_s:.3g} s (bucket "
                         f"{fast.size:,}), above the capture budget {budgets.capture_budget:.3g} s")
    if not parts:
        parts.append("each one is above the memory budget or the capture budget")
    return f"no candidate bucket fits the budgets: {'; '.join(parts)}"


def _alone_fits(q: CostPoint, budgets: Budgets) -> bool:
    return not budgets.broken([q.size], q.pool_bytes, q.capture_s)


def choose(traffic: Traffic, curve: CostCurve, budgets: Budgets | None = None, *,
           candidates: Sequence[int] | None = None, max_labels: int = MAX_LABELS,
           tolerance: float = 0.0) -> Plan | Infeasible:
    """The bucket list minimising the expected time per step over `traffic`, within
    `budgets`; candidates are the curve's sizes (or those given) up to max_size. Lists
    within `tolerance` (relative) of the best time count as tied: the fewest graphs win.

    Infeasible when no candidate fits the budgets even alone; InputError when the traffic
    lies outside max_size or the curve."""
    budgets = budgets or Budgets()
    if max_labels < 1:
        raise InputError(f"max_labels is {max_labels}", hint="keep at least 1 label")
    if not 0 <= tolerance < 1:
        raise InputError(f"tolerance is {tolerance}", hint="give a fraction in [0, 1), "
                                                           "e.g. 0.005 for 0.5%")
    check_traffic(traffic, curve, budgets)
    _, pool = bucket_list(sorted(set(curve.sizes if candidates is None else candidates)))
    if not pool:
        raise InputError("no candidate bucket size given", hint="give at least one size")
    within = [c for c in pool if budgets.max_size is None or c <= budgets.max_size]
    if not within:
        return Infeasible(f"no candidate bucket is at most max_size {budgets.max_size:,} "
                          f"(the smallest is {pool[0]:,})")
    points = [curve.at(c) for c in within]
    fitting = [q for q in points if _alone_fits(q, budgets)]
    if not fitting:
        return Infeasible(_nothing_fits(points, budgets))
    useful = _useful(fitting, traffic)
    p = _problem(useful, traffic, curve)
    dims, notes = _binding(p, budgets)
    if tolerance > 0:
        dims = dims if 0 in dims else [0, *dims]  # the best list of every graph count
        notes = [*notes, f"lists within {tolerance:.2%} of the best are tied: the fewest "
                         f"graphs win"]
    found = _search(p, _limits(budgets), dims, max_labels, tolerance)
    bound = None
    if not found.exact:
        relaxed = _search(p, _limits(budgets, resources=False), [d for d in dims if d == 0],
                          max_labels)
        bound = relaxed.expected_s if relaxed.exact else None
    chosen = evaluate(found.buckets, traffic, curve, budgets, label="plan")
    why = _why(found, (len(within), len(within) - len(fitting), len(fitting) - len(useful)),
               dims, notes, max_labels, bound, chosen.expected_s)
    return Plan(chosen, Method.EXACT if found.exact else Method.THINNED, why, tuple(within),
                budgets, bound, tolerance)


def _why(found: _Found, counts: tuple[int, int, int], dims: Sequence[int],
         notes: Sequence[str], max_labels: int, bound: float | None, time: float) -> str:
    m, alone, idle = counts
    parts = [f"{m} candidate(s)"]
    if alone:
        parts.append(f"{alone} above a budget on their own")
    if idle:
        parts.append(f"{idle} serving no traffic size, or beaten on every cost by one that "
                     "serves the same sizes")
    parts.append(f"{m - alone - idle} searched")
    parts += notes
    if dims:
        parts.append(f"frontiers over time and {', '.join(_DIMS[d] for d in dims)}, the "
                     f"largest {found.widest:,} label(s)")
    else:
        parts.append("no budget binds: one label per candidate")
    if found.thinned_at is not None:
        parts.append(f"the frontier at bucket {found.thinned_at:,} grew past {max_labels:,}"
                     f" labels, so each was thinned to {max_labels:,} evenly spaced by time:"
                     " the list keeps the budgets but may not be the best")
        if bound is not None:
            gap = time / bound - 1 if bound > 0 else 0.0
            parts.append(f"no list within the budgets beats {bound:.6g} s per step (the best "
                         f"without the memory and capture budgets), so the plan is at most "
                         f"{gap:.2%} above the best")
    if not found.buckets:
        parts.append("no graph: every batch runs eager, faster than any list within the "
                     "budgets")
    head = "exact" if found.exact else "not exact"
    return f"{head}: {'; '.join(parts)}"
