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


def _sorted_rows(a: np.ndarray) -> np.ndarray:
    if a.ndim == 1:
        return np.sort(a, kind="stable")
    return a[np.lexsort(a.T[::-1])]


def _compare(a: np.ndarray, b: np.ndarray, tol: Tolerance) -> str | None:
    if a.shape != b.shape:
        return f"shape {a.shape} != reference {b.shape}"
    if a.size == 0:
        return None
    if np.issubdtype(b.dtype, np.floating):
        if np.isnan(a).any():
            return f"{int(np.isnan(a).sum())} NaN values"
        bad = ~np.isclose(a, b, rtol=tol.rtol, atol=tol.atol)
    else:
        bad = a != b
    if not bad.any():
        return None
    first = int(np.flatnonzero(bad.reshape(-1))[0])
    return (f"{int(bad.sum())} of {a.size} values differ; first at flat index {first}: "
            f"{_item(a, first)} != {_item(b, first)}")


def _item(a: np.ndarray, i: int) -> Any:
    return a.reshape(-1)[i].item()
