"""The device comparison of framework steps on the GPU: PyTorch's and CuPy's all_close give
numpy's verdict (edge cases: tolerance edges, NaN, inf, integers, fp16/bf16), a failing step
gets the same reasons on the device path as on the host path, a passing one copies nothing
to the host, a CuPy step writing into a closure buffer the graph also writes is still judged
against its own eager rows, and --device reaches the adapters.

Each framework test skips with its own reason when that framework cannot run (FrameworkMissing);
the GPU itself skips only through the gpu_ctx fixture (no driver / no device)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import graphcert
from graphcert.buckets import parse_buckets
from graphcert.cert.results.verdict import Status
from graphcert.errors import FrameworkMissing, InputError
from graphcert.frameworks.adapters import Adapter, adapter_for
from graphcert.frameworks.compare import first_mismatch
from graphcert.kinds.topology.result import ClassResult
from graphcert.run.steps import verify_step
from graphcert.workloads.registry import load

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "steps"


def _adapter(framework: str, device: int = 0) -> Any:
    try:
        return adapter_for(framework, device)
    except FrameworkMissing as exc:
        pytest.skip(exc.one_line())


@pytest.fixture
def rows_on_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compare on the device whatever the rows' size (by default small rows go to the host)."""
    from graphcert.frameworks import compare

    monkeypatch.setattr(compare, "DEVICE_COMPARE_MIN_BYTES", 0)


def _host_rows(out: Any, n: int) -> Any:
    """Not first_rows: the same rows, but through the host path."""
    return out[:n]


def _counting(adapter: Adapter) -> list[int]:
    """Count the adapter's host copies (to_numpy calls)."""
    calls = [0]
    original = adapter.to_numpy

    def to_numpy(array: Any) -> np.ndarray:
        calls[0] += 1
        return original(array)

    adapter.to_numpy = to_numpy  # type: ignore[method-assign]
    return calls


def _edge_pairs(rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """(got, want) pairs around numpy's isclose edges for rtol = atol = 1e-3."""
    want = rng.standard_normal((64, 8))
    allowed = 1e-3 + 1e-3 * np.abs(want)
    inside, outside = want + allowed * 0.999, want + allowed * 1.001
    special = np.array([[np.nan, np.inf, -np.inf, 1.0], [np.nan, np.inf, np.inf, np.nan]])
    return [(want.copy(), want), (inside, want), (outside, want),
            (special[:1].copy(), special[:1]),  # NaN==NaN, inf==inf: close
            (special[1:], special[:1])]  # -inf vs inf, NaN vs 1.0: not close


def test_torch_all_close_is_numpys_verdict(gpu_ctx: object) -> None:
    adapter = _adapter("torch")
    import torch

    rng = np.random.default_rng(5)
    for got, want in _edge_pairs(rng):
        for dtype in (torch.float64, torch.float32, torch.float16, torch.bfloat16):
            g = torch.from_numpy(got).to("cuda", dtype)
            w = torch.from_numpy(want).to("cuda", dtype)
            host = first_mismatch([adapter.to_numpy(g)], [adapter.to_numpy(w)], 1e-3, 1e-3)
            assert adapter.all_close([g], [w], 1e-3, 1e-3) is (host is None), (dtype, host)
    ints = torch.arange(12, device="cuda").reshape(4, 3)
    assert adapter.all_close([ints, ints > 5], [ints.clone(), ints > 5], 0, 0) is True
    assert adapter.all_close([ints], [ints + (ints == 7)], 0, 0) is False
    assert adapter.all_close([ints.to(torch.complex64)], [ints.to(torch.complex64)], 0, 0) \
        is None
    assert adapter.all_close([ints], [ints[:2]], 0, 0) is None
    assert adapter.all_close([ints[:0]], [ints[:0]], 0, 0) is True


def test_cupy_all_close_is_numpys_verdict(gpu_ctx: object) -> None:
    adapter = _adapter("cupy")
    import cupy as cp

    rng = np.random.default_rng(6)
    for got, want in _edge_pairs(rng):
        for dtype in (np.float64, np.float32, np.float16):
            g, w = cp.asarray(got.astype(dtype)), cp.asarray(want.astype(dtype))
            host = first_mismatch([cp.asnumpy(g)], [cp.asnumpy(w)], 1e-3, 1e-3)
            assert adapter.all_close([g], [w], 1e-3, 1e-3) is (host is None), (dtype, host)
    ints = cp.arange(12).reshape(4, 3)
    assert adapter.all_close([ints], [ints.copy()], 0, 0) is True
    assert adapter.all_close([ints], [ints + (ints == 7)], 0, 0) is False
    assert adapter.all_close([ints.astype(cp.complex64)], [ints.astype(cp.complex64)], 0, 0) \
        is None


def test_torch_device_and_host_paths_give_the_same_reasons(gpu_ctx: object,
                                                          rows_on_device: None) -> None:
    _adapter("torch")
    ref = f"{EXAMPLES / 'torch_unsafe.py'}:UNSAFE"
    step = load(ref).step()
    buckets = parse_buckets("4,8")
    device = verify_step(step, ref, buckets, samples=4)
    host = verify_step(replace(step, rows=_host_rows), ref, buckets, samples=4)
    assert device.verdict.status is Status.FAIL and host.verdict.status is Status.FAIL
    # the same sizes fail, and each reason is worded the same up to its figures (two
    # captures' fp16 numbers, which the host path prints, may differ in the last digit)
    for d, h in zip(device.classes, host.classes, strict=True):
        assert [s.output_equal for s in d.samples] == [s.output_equal for s in h.samples]
        assert [r.split(" (graph ")[0] for r in d.reasons] == \
            [r.split(" (graph ")[0] for r in h.reasons]
    assert device.classes[1].reasons[0].startswith(
        "step torch_unsafe, bucket 8, n=5: output 0 row 0 differs")


def test_a_passing_torch_step_copies_nothing_to_the_host(gpu_ctx: object,
                                                         rows_on_device: None) -> None:
    adapter = _adapter("torch")
    calls = _counting(adapter)
    ref = f"{EXAMPLES / 'torch_decode.py'}:DECODE"
    result = verify_step(load(ref).step(), ref, parse_buckets("1,2,4,8"), samples=3,
                         adapter=adapter)
    assert result.verdict.status is Status.PASS, result.verdict.reasons
    assert calls[0] == 0


def test_small_rows_are_compared_on_the_host_by_default(gpu_ctx: object) -> None:
    adapter = _adapter("torch")
    calls = _counting(adapter)
    ref = f"{EXAMPLES / 'torch_decode.py'}:DECODE"
    result = verify_step(load(ref).step(), ref, parse_buckets("1,2,8"), samples=2, adapter=adapter)
    assert result.verdict.status is Status.PASS, result.verdict.reasons
    sampled = sum(len(c.samples) for c in result.classes if isinstance(c, ClassResult))
    assert sampled >= 3 and calls[0] == 2 * sampled  # one output: graph and eager rows each


WIDTH = 256
_OUT: list[Any] = []


def _closure_out() -> Any:
    """One output buffer in the steps' closure: eager calls and the graph both write it."""
    if not _OUT:
        import cupy as cp

        _OUT.append(cp.zeros((16, WIDTH), dtype=cp.float32))
    return _OUT[0]


def _doubles(x: Any) -> Any:
    import cupy as cp

    out = _closure_out()[: x.shape[0]]
    cp.multiply(x, 2.0, out=out)
    return out


def _shifts(x: Any) -> Any:
    """Row i is row i+1 of the batch (the last row wraps to row 0): at n < bucket the
    graph's row n-1 reads a padded row. Elementwise copies only (nothing allocates)."""
    import cupy as cp

    out = _closure_out()[: x.shape[0]]
    cp.copyto(out[:-1], x[1:])
    cp.copyto(out[-1:], x[:1])
    return out


def _batch(n: int) -> tuple[Any]:
    import cupy as cp

    return (cp.random.default_rng(4000 + n).standard_normal((n, WIDTH), dtype=cp.float32)
            + 3.0,)


@pytest.mark.parametrize("rows", ["device", "host"])
def test_cupy_closure_buffer_steps_are_judged_against_their_own_eager_rows(
        gpu_ctx: object, rows_on_device: None, rows: str) -> None:
    _adapter("cupy")
    extra: dict[str, Any] = {} if rows == "device" else {"rows": _host_rows}
    safe = graphcert.step(_doubles, _batch, framework="cupy", name="doubles", rtol=0, atol=0,
                          **extra)
    result = graphcert.verify_step(safe, "4,16", samples=3)
    assert result.verdict.status is Status.PASS, result.verdict.reasons
    unsafe = graphcert.step(_shifts, _batch, framework="cupy", name="shifts", rtol=0, atol=0,
                            **extra)
    result = graphcert.verify_step(unsafe, "16", samples=4)
    assert result.verdict.status is Status.FAIL
    (cls,) = result.classes
    assert isinstance(cls, ClassResult)
    first = next(s for s in cls.samples if s.output_equal is False)
    # the eager rows were kept before the replay overwrote the shared buffer
    assert f"n={first.n:,}: output 0 row {first.n - 1} differs" in cls.reasons[0], cls.reasons
    assert cls.samples[-1].n == 16 and cls.samples[-1].output_equal is True


_TORCH_OUT: list[Any] = []


def _torch_closure_out() -> Any:
    if not _TORCH_OUT:
        import torch

        _TORCH_OUT.append(torch.zeros((16, WIDTH), device="cuda"))
    return _TORCH_OUT[0]


def _torch_doubles(x: Any) -> Any:
    import torch

    out = _torch_closure_out()[: x.shape[0]]
    return torch.mul(x, 2.0, out=out)


def _torch_shifts(x: Any) -> Any:
    """As _shifts: at n < bucket the graph's row n-1 reads a padded row."""
    out = _torch_closure_out()[: x.shape[0]]
    out[:-1].copy_(x[1:])
    out[-1:].copy_(x[:1])
    return out


def _torch_batch(n: int) -> tuple[Any]:
    import torch

    gen = torch.Generator(device="cuda").manual_seed(4000 + n)
    return (torch.randn(n, WIDTH, device="cuda", generator=gen) + 3.0,)


def test_torch_keeps_the_eager_rows_of_a_closure_buffer(gpu_ctx: object) -> None:
    """A PyTorch step writing into a buffer of its closure that the graph overwrites is
    judged against its own eager rows (kept before the replay), safe or not."""
    adapter = _adapter("torch")
    safe = graphcert.step(_torch_doubles, _torch_batch, framework="torch", name="doubles",
                          rtol=0, atol=0)
    result = verify_step(safe, "doubles", parse_buckets("4,16"), samples=3, adapter=adapter)
    assert result.verdict.status is Status.PASS, result.verdict.reasons
    unsafe = graphcert.step(_torch_shifts, _torch_batch, framework="torch", name="shifts",
                            rtol=0, atol=0)
    result = verify_step(unsafe, "shifts", parse_buckets("16"), samples=4, adapter=adapter)
    (cls,) = result.classes
    assert isinstance(cls, ClassResult) and result.verdict.status is Status.FAIL
    first = next(s for s in cls.samples if s.output_equal is False)
    assert f"n={first.n:,}: output 0 row {first.n - 1} differs" in cls.reasons[0], cls.reasons
    assert cls.samples[-1].n == 16 and cls.samples[-1].output_equal is True


def test_torch_head_and_padding_match_indexing(gpu_ctx: object) -> None:
    adapter = _adapter("torch")
    import torch

    base = torch.arange(60, device="cuda").reshape(12, 5)
    for n in (0, 1, 7, 11):
        assert torch.equal(adapter.head(base, n), base[:n]), n
    assert adapter.head(base, 12) is base and adapter.head(base, 99) is base
    assert adapter.head(base[0, 0], 3).ndim == 0
    static = (torch.full((6, 3), 9.0, device="cuda"),)
    adapter.pad_into(static, (torch.ones(4, 3, device="cuda"),), 4, (-1.0,))
    assert static[0][:4].eq(1).all() and static[0][4:].eq(-1).all()
    adapter.pad_into(static, (torch.zeros(6, 3, device="cuda"),), 6, (-1.0,))
    assert static[0].eq(0).all()


def test_device_reaches_the_adapters(gpu_ctx: object) -> None:
    adapter = _adapter("torch")
    import torch

    assert adapter.device == 0 and torch.cuda.current_device() == 0
    with pytest.raises(InputError, match="--device 99 is not a GPU PyTorch sees"):
        adapter_for("torch", 99)
    if torch.cuda.device_count() < 2:
        return  # one GPU: the index and the refusal above are what can be checked
    seen: list[int] = []

    def scale(x: Any) -> Any:  # no weights in a closure: they would live on one device
        seen.append(x.device.index)
        return x * 2.0 + 1.0

    def make(n: int) -> tuple[Any]:
        return (torch.randn(n, 64, device="cuda"),)  # "cuda": the current device

    step = graphcert.step(scale, make, framework="torch", name="scale")
    try:
        result = graphcert.verify_step(step, "4", samples=2, device=1)
    finally:
        torch.cuda.set_device(0)  # the other tests work on device 0
    assert result.verdict.status is Status.PASS, result.verdict.reasons
    assert set(seen) == {1}
