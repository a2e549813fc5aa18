"""Comparing a workload's outputs with its numpy reference. Pure."""

from __future__ import annotations

from typing import Any

import numpy as np

from graphcert.workloads.base import Tolerance


def mismatches(got: dict[str, np.ndarray], want: dict[str, np.ndarray],
               tol: Tolerance) -> list[str]:
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


def _not_close(a: np.ndarray, b: np.ndarray, tol: Tolerance) -> tuple[int, int]:
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


def _compare(a: np.ndarray, b: np.ndarray, tol: Tolerance) -> str | None:
    if a.shape != b.shape:
        return f"shape {a.shape} != reference {b.shape}"
    if a.size == 0:
        return None
    if np.issubdtype(b.dtype, np.floating):
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
