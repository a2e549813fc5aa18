"""decode's float64 numpy reference, checked by hand, and its tolerance against a float32
emulation of the kernels (CPU only; the fake context is the fixpoint/decode/converge one)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphcert.outputs import mismatches
from graphcert.workloads import decode as decode_mod
from graphcert.workloads.base import Tolerance
from graphcert.workloads.decode import EPS, Decode, decode_reference
from tests.workloads.test_workloads_fixpoint_decode_converge import _set_up


def _gelu(v: float) -> float:
    return 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))


def test_decode_reference_by_hand() -> None:
    x0 = np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32)
    ones = np.ones((1, 2), dtype=np.float32)
    eye = np.eye(2, dtype=np.float32)[None]
    got = decode_reference(x0, ones, eye, np.zeros((1, 2), dtype=np.float32))
    rms = math.sqrt((9 + 16) / 2 + EPS)
    want = [[3 + _gelu(3 / rms), 4 + _gelu(4 / rms)], [0.0, 0.0]]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # Zero weights: every layer adds gelu(bias) to the input, whatever the norm says.
    zeros = np.zeros((3, 2, 2), dtype=np.float32)
    bias = np.full((3, 2), 1.0, dtype=np.float32)
    got = decode_reference(x0, np.ones((3, 2), dtype=np.float32), zeros, bias)
    np.testing.assert_allclose(got, x0 + 3 * _gelu(1.0), rtol=1e-6)


def _float32_emulation(x0: np.ndarray, model: dict[str, np.ndarray]) -> np.ndarray:
    """The kernels' arithmetic in float32 numpy (different order, same precision)."""
    f = np.float32
    x = x0.copy()
    for g, w, b in zip(model["gains"], model["weights"], model["biases"], strict=True):
        ss = np.sum(x * x, axis=1, keepdims=True, dtype=f)
        h = x * (f(1) / np.sqrt(ss / f(x.shape[1]) + f(EPS))) * g
        z = h @ w + b
        x = x + f(0.5) * z * (f(1) + np.tanh(f(0.7978845608028654) * (z + f(0.044715) * z**3)))
    return x


def test_decode_tolerance_covers_float32_with_margin() -> None:
    d = Decode()
    model = d.model(np.random.default_rng(11))
    x0 = np.random.default_rng(12).random((4096, 64), dtype=np.float32) * 2 - 1
    want = decode_reference(x0, model["gains"], model["weights"], model["biases"])
    got = _float32_emulation(x0, model)
    assert mismatches({"x": got}, {"x": want}, d.tolerance) == []
    tol = d.tolerance
    ratio = np.abs(got - want) / (tol.atol + tol.rtol * np.abs(want))
    assert ratio.max() < 0.5  # at least 2x headroom for the GPU's own rounding
    # ...while a real bug (one layer's bias left out) is far outside it.
    model["biases"][2] = 0
    wrong = _float32_emulation(x0, model)
    assert mismatches({"x": wrong}, {"x": want}, d.tolerance) != []


def test_decode_reference_gathers_pool_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decode_mod, "POOL_ROWS", 16)
    d = _set_up(Decode(layers=2, hidden=8), 64)  # 64 rows from a pool of 16
    rows = d._host["rows"]
    assert rows.shape == (64,) and rows.max() < 16
    x0 = d._host["pool"][rows]
    want = decode_reference(x0[:50], d._host["gains"], d._host["weights"], d._host["biases"])
    assert np.array_equal(d.reference(50)["x"], want)
    assert d.reference(0)["x"].shape == (0, 8)


def test_decode_small_class_rows_are_distinct() -> None:
    d = _set_up(Decode(hidden=4), 256)
    assert np.array_equal(d._host["rows"], np.arange(256))
    assert d.reference(255)["x"].shape == (255, 4)
    assert d.tolerance == Tolerance(rtol=1e-4, atol=1e-5)
