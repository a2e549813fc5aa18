"""Align two sequences (node signatures in canonical order) in near-linear time. Pure.

`align` pairs positions of a with positions of b that hold equal items, in order:

- difflib's SequenceMatcher blocks, exactly as `graphcert diff` always paired nodes, where
  difflib's searches stay within DIFFLIB_STEPS_MAX steps (counted as they go, from an upper
  bound of each search: for each item of a in its range, the item's occurrences in b, plus
  one). Its searches grow with the product of the lengths and with the number of blocks:
  two 1e5-node graphs with a few kernel names ran for more than five minutes.
- Beyond that, the common prefix and suffix, and between them a shortest edit script
  (Myers' O(ND) greedy search, up to MYERS_EDITS_MAX edits; where more are needed, nothing
  in between is paired here: the caller pairs what is left by signature, in order).
"""

from __future__ import annotations

import difflib
from collections.abc import Hashable, Sequence
from itertools import accumulate

DIFFLIB_STEPS_MAX = 1 << 22
"""The most steps difflib's searches may take (about a second); beyond, the linear path."""

MYERS_EDITS_MAX = 512
"""The most insertions plus deletions the edit-script search looks for (its cost grows with
their square)."""


class _OverBudget(Exception):
    pass


class _Budgeted(difflib.SequenceMatcher[Hashable]):
    """A SequenceMatcher that stops (raises _OverBudget) before a search would take the
    steps past the budget. A search over a[alo:ahi] visits, for each item, at most its
    occurrences in b plus one: `cost` holds their running sums."""

    def __init__(self, a: Sequence[Hashable], b: Sequence[Hashable], budget: int) -> None:
        count: dict[Hashable, int] = {}
        for x in b:
            count[x] = count.get(x, 0) + 1
        self.cost = [0, *accumulate(count.get(x, 0) + 1 for x in a)]
        self.left, self.len_a = budget, len(a)
        if self.cost[-1] > budget:  # the first search alone: not worth indexing b
            raise _OverBudget
        super().__init__(None, a, b, autojunk=False)

    def find_longest_match(self, alo: int = 0, ahi: int | None = None, blo: int = 0,
                           bhi: int | None = None) -> difflib.Match:
        self.left -= self.cost[self.len_a if ahi is None else ahi] - self.cost[alo]
        if self.left < 0:
            raise _OverBudget
        return super().find_longest_match(alo, ahi, blo, bhi)


def align(a: Sequence[Hashable], b: Sequence[Hashable]) -> dict[int, int]:
    """Position in a -> position in b, for the items paired (equal, in increasing order)."""
    try:
        blocks = _Budgeted(a, b, DIFFLIB_STEPS_MAX).get_matching_blocks()
        return {blk.a + k: blk.b + k for blk in blocks for k in range(blk.size)}
    except _OverBudget:
        pass
    # Small ints for the items: slices of them compare in C (identity first).
    code: dict[Hashable, int] = {}
    ca = [code.setdefault(x, len(code)) for x in a]
    cb = [code.setdefault(x, len(code)) for x in b]
    head = _run(ca, cb, 0, 0)
    tail = min(_run(ca[::-1], cb[::-1], 0, 0), min(len(ca), len(cb)) - head)
    pairs = {i: i for i in range(head)}
    mid_a, mid_b = ca[head:len(ca) - tail], cb[head:len(cb) - tail]
    for x, y, size in _edit_script_blocks(mid_a, mid_b, MYERS_EDITS_MAX) or ():
        pairs.update({head + x + k: head + y + k for k in range(size)})
    pairs.update({len(ca) - tail + k: len(cb) - tail + k for k in range(tail)})
    return pairs


def _run(a: list[int], b: list[int], x: int, y: int) -> int:
    """Length of the common run a[x:] and b[y:] start with: galloping slice comparisons,
    so a long run costs C time and a logarithmic number of Python steps."""
    most = min(len(a) - x, len(b) - y)
    if most <= 0 or x < 0 or y < 0 or a[x] != b[y]:
        return 0
    done, step = 1, 1
    while done < most:
        end = min(done + step, most)
        if a[x + done:x + end] == b[y + done:y + end]:
            done, step = end, step * 2
            continue
        lo, hi = done, end  # a[x:x+lo] matches; a[x:x+hi] does not
        while hi - lo > 1:
            half = (lo + hi) // 2
            if a[x + lo:x + half] == b[y + lo:y + half]:
                lo = half
            else:
                hi = half
        return lo
    return done


def _edit_script_blocks(a: list[int], b: list[int], max_edits: int
                        ) -> list[tuple[int, int, int]] | None:
    """Matching blocks (x, y, size) of a shortest edit script turning a into b (Myers 1986,
    the greedy forward search), or None where it needs more than max_edits edits."""
    n, m = len(a), len(b)
    if not n or not m or abs(n - m) > max_edits:
        return None
    v: dict[int, int] = {1: 0}  # diagonal k = x - y -> furthest x reached
    trace: list[dict[int, int]] = []
    for d in range(max_edits + 1):
        row: dict[int, int] = {}
        for k in range(-d, d + 1, 2):
            x = v[k + 1] if k == -d or (k != d and v[k - 1] < v[k + 1]) else v[k - 1] + 1
            x += _run(a, b, x, x - k)
            row[k] = x
            if x >= n and x - k >= m:
                trace.append(row)
                return _backtrack(trace, n, m)
        trace.append(row)
        v = row
    return None


def _backtrack(trace: list[dict[int, int]], n: int, m: int) -> list[tuple[int, int, int]]:
    blocks: list[tuple[int, int, int]] = []
    x, y = n, m
    for d in range(len(trace) - 1, 0, -1):
        k = x - y
        prev = trace[d - 1]
        down = k == -d or (k != d and prev[k - 1] < prev[k + 1])
        pk = k + 1 if down else k - 1
        px = prev[pk]
        sx, sy = (px, px - pk + 1) if down else (px + 1, px - pk)  # after the edit
        if x > sx:
            blocks.append((sx, sy, x - sx))
        x, y = px, px - pk
    if x > 0:
        blocks.append((0, 0, x))
    blocks.reverse()
    return blocks


__all__ = ["DIFFLIB_STEPS_MAX", "MYERS_EDITS_MAX", "align"]
