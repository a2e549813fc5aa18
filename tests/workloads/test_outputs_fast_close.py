"""The float32 pre-check (`_clearly_close`) never passes what the exact float64 path would
fail: compared with that path on synthetic data pushed to the tolerance bound, with NaN, inf
and overflow, and across chunk and thread splits. Synthetic data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphcert import outputs
from graphcert.workloads.base import Tolerance

TOLS = [Tolerance(1e-4, 1e-5), Tolerance(1e-2, 1e-6), Tolerance(0.0, 1e-3),
        Tolerance(0.5, 1e-30)]


def _exact_ok(a: np.ndarray, b: np.ndarray, tol: Tolerance) -> bool:
    return not np.isnan(a).any() and outputs._not_close(a, b, tol)[0] == 0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, width=32), min_size=1, max_size=40),
       st.lists(st.floats(0.9, 1.1), min_size=1, max_size=40),
       st.sampled_from(TOLS))
def test_fast_pass_implies_exact_pass_at_the_bound(values: list[float], scale: list[float],
                                                    tol: Tolerance) -> None:
    b = np.array(values, dtype=np.float32)
    k = np.resize(np.array(scale), b.size)
    # a sits at about scale * the allowed distance from b: both sides of the bound.
    a = (b.astype(np.float64) + k * (tol.atol + tol.rtol * np.abs(b))).astype(np.float32)
    if outputs._clearly_close(a, b, tol):
        assert _exact_ok(a, b, tol)


@pytest.mark.parametrize("tol", TOLS)
def test_exactly_at_the_bound_falls_back_and_agrees(tol: Tolerance) -> None:
    b = np.linspace(-100, 100, 4001, dtype=np.float32)
    bound = tol.atol + tol.rtol * np.abs(b.astype(np.float64))
    for nudge in (-1, 0, 1):
        a = np.nextafter((b + bound).astype(np.float32), np.float32(nudge * np.inf))
        fast = outputs._clearly_close(a, b, tol)
        assert not fast or _exact_ok(a, b, tol)
        assert outputs._compare(a, b, tol) is None if _exact_ok(a, b, tol) else \
            outputs._compare(a, b, tol) is not None


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, np.float32(3e38)])
def test_special_values_take_the_exact_path(bad: float) -> None:
    b = np.ones(1000, dtype=np.float32)
    a = b.copy()
    assert outputs._clearly_close(a, b, TOLS[0])
    a[517] = bad
    assert not outputs._clearly_close(a, b, TOLS[0])
    assert outputs._compare(a, b, TOLS[0]) is not None
    b[517] = a[517] = np.inf  # an infinite reference is close to itself only (exact path)
    assert not outputs._clearly_close(a, b, TOLS[0])
    assert outputs._compare(a, b, TOLS[0]) is None


def test_other_dtypes_and_zero_atol_use_the_exact_path() -> None:
    b = np.ones(10, dtype=np.float32)
    assert not outputs._clearly_close(b.astype(np.float64), b.astype(np.float64), TOLS[0])
    assert not outputs._clearly_close(b, b, Tolerance(1e-4, 0.0))
    assert not outputs._clearly_close(b, b, Tolerance())


def test_one_bad_element_in_any_chunk_or_thread_is_seen(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.setattr(outputs, "_FAST_CHUNK", 64)
    monkeypatch.setattr(outputs, "_PER_THREAD", 256)
    monkeypatch.setattr(outputs, "_threads", lambda: 4)
    rng = np.random.default_rng(5)
    b = rng.standard_normal(2000).astype(np.float32)
    assert outputs._clearly_close(b.copy(), b, TOLS[0])
    for i in (0, 63, 64, 499, 500, 1000, 1999):
        a = b.copy()
        a[i] += np.float32(0.5)
        assert not outputs._clearly_close(a, b, TOLS[0])
        message = outputs._compare(a, b, TOLS[0])
        assert message is not None and f"flat index {i}:" in message
