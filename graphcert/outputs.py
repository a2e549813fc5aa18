"""Comparing a workload's outputs with its numpy reference, within the workload's tolerance.
Pure: numpy only."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import numpy as np


class ToleranceLike(Protocol):
    """How outputs compare: a workload's `graphcert.workloads.base.Tolerance`, taken by shape so
    this pure module needs nothing from workloads/ (the protocol stays free of numpy)."""

    @property
    def rtol(self) -> float: ...

    @property
    def atol(self) -> float: ...

    @property
    def unordered(self) -> tuple[str, ...]: ...


def mismatches(got: dict[str, np.ndarray], want: dict[str, np.ndarray],
               tol: ToleranceLike) -> list[str]:
    """One line per output that differs from the reference; empty when all agree.

    Outputs named in `tol.unordered` compare as multisets (row order is not part of the
    answer, as with a hash join's matches); floats compare within rtol/atol.
    """
    problems = []
    for name in sorted(set(want) | set(got)):
        if name not in got:
            problems.append(f"output {name!r} missing")
            continue
        if name not in want:
            problems.append(f"output {name!r} has no reference")
            continue
        a, b = np.asarray(got[name]), np.asarray(want[name])
        if name in tol.unordered:
            a, b = _sorted_rows(a), _sorted_rows(b)
        problem = _compare(a, b, tol)
        if problem:
            problems.append(f"output {name!r}: {problem}")
    return problems


# Floats are compared this many elements at a time: np.isclose over 64M floats builds several
# full-size temporaries (twice per verify class); chunks keep them in cache.
_CHUNK = 1 << 20


def _sorted_rows(a: np.ndarray) -> np.ndarray:
    """Rows in lexicographic order. Pairs of unsigned 32-bit values (a join's matches) sort as
    one uint64 key (first column high) per row: one sort instead of a two-key lexsort, and
    the same order, so mismatch messages are unchanged."""
    if a.ndim == 1:
        return np.sort(a, kind="stable")
    if a.ndim == 2 and a.shape[1] == 2 and a.dtype.kind == "u" and a.dtype.itemsize <= 4:
        key = (a[:, 0].astype(np.uint64) << np.uint64(32)) | a[:, 1].astype(np.uint64)
        key.sort()
        rows = np.empty_like(a)
        rows[:, 0] = key >> np.uint64(32)
        rows[:, 1] = key & np.uint64(0xFFFFFFFF)
        return rows
    return a[np.lexsort(a.T[::-1])]


def _not_close(a: np.ndarray, b: np.ndarray, tol: ToleranceLike) -> tuple[int, int]:
    """(how many, first flat index) of elements outside |a-b| <= atol + rtol*|b| (np.isclose's
    rule and dtypes: an infinite reference is close only to itself), counted in chunks."""
    fa, fb = a.reshape(-1), b.reshape(-1)
    dt = np.result_type(fb, 1.0)
    count, first = 0, -1
    for lo in range(0, fa.size, _CHUNK):
        x, y = fa[lo:lo + _CHUNK], fb[lo:lo + _CHUNK].astype(dt, copy=False)
        with np.errstate(invalid="ignore", over="ignore"):
            ok = (np.abs(x - y) <= tol.atol + tol.rtol * np.abs(y)) & np.isfinite(y)
            ok |= x == y
        bad = np.flatnonzero(~ok)
        if bad.size:
            count += int(bad.size)
            first = lo + int(bad[0]) if first < 0 else first
    return count, first


# A float32 pass proves "every element within tolerance" with this much to spare; anything
# short of it (a NaN, an inf, one element near the bound) takes the exact float64 path.
_MARGIN = 1.0 - 2.0 ** -16
_FAST_CHUNK = 1 << 16  # three float32/bool scratch buffers of this size stay in L2


def _clearly_close(a: np.ndarray, b: np.ndarray, tol: ToleranceLike) -> bool:
    """True only if _not_close would find nothing and `a` holds no NaN, decided in float32
    without promoting 64M elements to float64 (that promotion dominated decode's compare).

    Why it is safe: with thr = fl32(|y| * fl32(rtol*m) + fl32(atol*m)) and m = 1 - 2^-16,
    fl32(|x-y|) <= thr implies |x-y| <= m(1+2^-24)^4 (atol + rtol|y|), below the float64
    bound by far more than float64 rounding; underflow in |y|*rtol costs at most 2^-149
    absolute, nothing against atol >= 1e-30. A NaN or inf anywhere fails the comparison
    and so falls back to the exact path. Only float32 against float32 with such atol/rtol."""
    if not (a.dtype == b.dtype == np.float32 and 1e-30 <= tol.atol <= 1e30
            and 0.0 <= tol.rtol <= 0.5):
        return False
    fa, fb = a.reshape(-1), b.reshape(-1)
    r, at = np.float32(tol.rtol * _MARGIN), np.float32(tol.atol * _MARGIN)
    parts = min(_threads(), fa.size // _PER_THREAD)
    if parts < 2:
        return _close_part(fa, fb, r, at)
    # numpy releases the GIL in ufuncs: memory-bound passes scale with threads.
    edges = [fa.size * i // parts // _FAST_CHUNK * _FAST_CHUNK for i in range(parts)]
    edges.append(fa.size)
    return all(_pool().map(lambda i: _close_part(fa[edges[i]:edges[i + 1]],
                                                 fb[edges[i]:edges[i + 1]], r, at),
                           range(parts)))


_PER_THREAD = 1 << 22  # elements below which a thread costs more than it saves
_executor: ThreadPoolExecutor | None = None


def _threads() -> int:
    return min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else os.cpu_count() or 1)


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(_threads(), thread_name_prefix="graphcert-compare")
    return _executor


def _close_part(fa: np.ndarray, fb: np.ndarray, r: np.float32, at: np.float32) -> bool:
    """_clearly_close over one slice, in cache-sized chunks with reused scratch."""
    size = min(_FAST_CHUNK, fa.size)
    d, t, ok = np.empty(size, np.float32), np.empty(size, np.float32), np.empty(size, bool)
    with np.errstate(invalid="ignore", over="ignore"):
        for lo in range(0, fa.size, _FAST_CHUNK):
            x, y = fa[lo:lo + _FAST_CHUNK], fb[lo:lo + _FAST_CHUNK]
            k = x.size
            dk, tk, okk = d[:k], t[:k], ok[:k]
            np.subtract(x, y, out=dk)
            np.abs(dk, out=dk)
            np.abs(y, out=tk)
            tk *= r
            tk += at
            np.less_equal(dk, tk, out=okk)
            if not okk.all():
                return False
    return True


def _compare(a: np.ndarray, b: np.ndarray, tol: ToleranceLike) -> str | None:
    if a.shape != b.shape:
        return f"shape {a.shape} != reference {b.shape}"
    if a.size == 0:
        return None
    if np.issubdtype(b.dtype, np.floating):
        if _clearly_close(a, b, tol):  # the common case, proven in float32 (no NaN either)
            return None
        if np.isnan(a).any():
            return f"{int(np.isnan(a).sum())} NaN values"
        count, first = _not_close(a, b, tol)
    else:
        bad = (a != b).reshape(-1)
        count = int(np.count_nonzero(bad))
        first = int(np.argmax(bad)) if count else -1
    if not count:
        return None
    return (f"{count} of {a.size} values differ; first at flat index {first}: "
            f"{_item(a, first)} != {_item(b, first)}")


def _item(a: np.ndarray, i: int) -> Any:
    return a.reshape(-1)[i].item()
