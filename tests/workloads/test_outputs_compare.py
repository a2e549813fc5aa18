"""The chunked tolerance check and the uint64-key row sort give exactly what np.isclose and a
two-key lexsort gave (the old implementation, inlined here as the oracle). Synthetic data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphcert import outputs
from graphcert.outputs import mismatches
from graphcert.workloads.base import Tolerance


def _old_compare(a: np.ndarray, b: np.ndarray, tol: Tolerance) -> tuple[int, int]:
    bad = ~np.isclose(a, b, rtol=tol.rtol, atol=tol.atol)
    return int(bad.sum()), (int(np.flatnonzero(bad.reshape(-1))[0]) if bad.any() else -1)


SPECIAL = [0.0, -0.0, 1e-5, np.inf, -np.inf, np.nan, 1e30, -1e-30]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(SPECIAL + [1.0, 2.0]),
                          st.floats(-1e-3, 1e-3, allow_nan=False)), min_size=1, max_size=60),
       st.sampled_from([(1e-4, 1e-5), (0.0, 0.0), (1e-2, 0.0)]))
def test_tolerance_check_matches_isclose(pairs: list[tuple[float, float]],
                                         tols: tuple[float, float]) -> None:
    tol = Tolerance(rtol=tols[0], atol=tols[1])
    b = np.array([p[0] for p in pairs], dtype=np.float32)
    with np.errstate(invalid="ignore"):
        a = (b + np.array([p[1] for p in pairs], dtype=np.float32)).astype(np.float32)
    assert outputs._not_close(a, b, tol) == _old_compare(a, b, tol)


def test_chunks_count_and_first_across_boundaries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outputs, "_CHUNK", 7)
    rng = np.random.default_rng(3)
    b = rng.standard_normal(100).astype(np.float32)
    a = b.copy()
    a[[13, 14, 50, 99]] += 1.0
    tol = Tolerance(rtol=1e-4, atol=1e-5)
    assert outputs._not_close(a, b, tol) == (4, 13) == _old_compare(a, b, tol)
    assert mismatches({"x": a}, {"x": b}, tol) == [
        f"output 'x': 4 of 100 values differ; first at flat index 13: {a[13].item()} != "
        f"{b[13].item()}"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)), max_size=40))
def test_pair_sort_is_lexsort(rows: list[tuple[int, int]]) -> None:
    a = np.array(rows, dtype=np.uint32).reshape(-1, 2)
    np.testing.assert_array_equal(outputs._sorted_rows(a), a[np.lexsort(a.T[::-1])])


def test_join_multiset_messages_unchanged() -> None:
    tol = Tolerance(unordered=("pairs",))
    want = np.array([[5, 1], [0, 9], [5, 0], [2**32 - 1, 3]], dtype=np.uint32)
    assert mismatches({"pairs": want[::-1].copy()}, {"pairs": want}, tol) == []
    got = want.copy()
    got[2, 1] = 7
    problem = mismatches({"pairs": got}, {"pairs": want}, tol)
    # sorted: want (0,9) (5,0) (5,1) (max,3); got (0,9) (5,1) (5,7) (max,3)
    assert problem == ["output 'pairs': 2 of 8 values differ; first at flat index 3: 1 != 0"]


def test_integer_outputs_exact() -> None:
    want = np.arange(10, dtype=np.uint32)
    got = want.copy()
    got[[3, 8]] = 0
    assert mismatches({"v": got}, {"v": want}, Tolerance()) == [
        "output 'v': 2 of 10 values differ; first at flat index 3: 0 != 3"]
