"""Why a framework step's bucket fails, on the GPU with PyTorch (issue 33 items 1 and 2): the
issue's user cases (a closure float the eager path changes: stale capture, not padding; one
pad value for every input where slots need -1; the `.item()` captured in every bucket, one
line and a count, is tests/gpu/test_steps_gpu.py's synchronising step) and the
padding-dependent example step; and each adapter's padding with the real rows repeated (the
integer poison); moved memory with a CuPy step whose raw kernel takes plain pointers (written
on 2026-11-27 when the device time had run out: not yet run on a GPU). The CPU side is
tests/steps/test_steps_causes.py.

Each test skips with its own reason when its framework cannot run (FrameworkMissing); the
GPU itself skips only through the gpu_ctx fixture (no driver / no device)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import graphcert
from graphcert.cert.results.verdict import Status
from graphcert.errors import FrameworkMissing
from graphcert.frameworks.adapters import Adapter, adapter_for
from graphcert.kinds.topology.causes import Cause
from graphcert.kinds.topology.result import ClassResult, VerifyResult
from graphcert.workloads.registry import load

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "steps"


def _adapter(framework: str) -> Adapter:
    try:
        return adapter_for(framework)
    except FrameworkMissing as exc:
        pytest.skip(exc.one_line())


def _failed(result: VerifyResult) -> list[ClassResult]:
    return [c for c in result.classes if isinstance(c, ClassResult) and not c.passed]


def _moved_memory_reason(step: Any, make_inputs: Any, framework: str) -> str:
    """Verify `step` at bucket 8: its one failing class must be moved memory; its reason."""
    result = graphcert.verify_step(graphcert.step(step, make_inputs, framework=framework,
                                                  name="reloads"), "8", samples=2)
    (failed,) = _failed(result)
    assert failed.cause is Cause.MOVED_MEMORY, (failed.cause, failed.reasons)
    return failed.reasons[0]


def test_the_padding_dependent_example_is_named_padding_dependence(gpu_ctx: object) -> None:
    _adapter("torch")
    ref = f"{EXAMPLES / 'torch_unsafe.py'}:UNSAFE"
    result = graphcert.verify_step(load(ref).step(), "4,8", samples=3, ref=ref)
    assert result.verdict.status is Status.FAIL
    failed = _failed(result)
    assert failed and all(c.cause is Cause.PADDING for c in failed), \
        [(c.capacity, c.cause, c.reasons) for c in failed]
    why = failed[0].reasons[0]
    assert "padding dependence: its real rows change when only the" in why, why
    assert "(padded with 0, then with NaN)" in why and "mask the padding" in why


def test_a_closure_float_the_eager_path_bumps_is_stale_capture(gpu_ctx: object) -> None:
    """The issue's first case: a step counter folded into the result as a Python float; the
    graph replays the value it was captured with. Not padding dependence."""
    _adapter("torch")
    import torch

    state = {"t": 0.0}

    def counted(x: Any) -> Any:
        state["t"] += 1.0
        return x + state["t"]

    def make(n: int) -> tuple[Any]:
        gen = torch.Generator(device="cuda").manual_seed(100 + n)
        return (torch.randn(n, 64, device="cuda", generator=gen),)

    step = graphcert.step(counted, make, framework="torch", name="counted")
    result = graphcert.verify_step(step, "vllm:16", samples=3)
    assert result.verdict.status is Status.FAIL  # the verdict itself is unchanged
    failed = _failed(result)
    assert len(failed) == 5, [c.capacity for c in failed]
    for cls in failed:
        assert cls.cause is Cause.STALE_CAPTURE, (cls.capacity, cls.reasons)
        assert "padding dependence" not in " ".join(cls.reasons)
        assert "stale capture: " in cls.reasons[0], cls.reasons
    assert result.verdict.reasons[-1] == \
        "4 more class(es) fail the same way (stale capture): 2, 4, 8, 16"


def _masked_step(pad: Any) -> Any:
    """Token rows and their cache slots; a slot of -1 is a padded row, left out of a sum
    over the batch that every real row reads (as an engine leaves it out of cache writes)."""
    import torch

    def masked(x: Any, slots: Any) -> Any:
        keep = (slots >= 0).to(x.dtype).unsqueeze(1)
        return x + (x * keep).sum(dim=0, keepdim=True)

    def make(n: int) -> tuple[Any, Any]:
        gen = torch.Generator(device="cuda").manual_seed(300 + n)
        return (torch.randn(n, 64, device="cuda", generator=gen),
                torch.arange(n, device="cuda", dtype=torch.int64))

    return graphcert.step(masked, make, framework="torch", name="masked", pad_value=pad)


def test_a_pad_value_per_input_passes_where_one_for_all_fails(gpu_ctx: object) -> None:
    """The issue's third case: slots padded with -1 and the rest with 1.0 pass; 1.0 for
    every input fails, named padding dependence (the poison: NaN for the floats, the real
    slots repeated, so no index leaves its range)."""
    _adapter("torch")
    good = graphcert.verify_step(_masked_step((1.0, -1)), "4,8,16", samples=3)
    assert good.verdict.status is Status.PASS, good.verdict.reasons
    assert good.settings is not None and good.settings.to_json()["pad_value"] == [1.0, -1]
    by_position = graphcert.verify_step(_masked_step({0: 1.0, 1: -1}), "8", samples=3)
    assert by_position.verdict.status is Status.PASS, by_position.verdict.reasons
    bad = graphcert.verify_step(_masked_step(1.0), "4,8,16", samples=3)
    failed = _failed(bad)
    assert failed and all(c.cause is Cause.PADDING for c in failed), \
        [(c.capacity, c.reasons) for c in failed]
    assert "(padded with 1, then with [NaN, copies of the real rows])" in failed[0].reasons[0]


def test_weights_freed_after_capture_are_moved_memory_named_by_node_and_parameter(
        gpu_ctx: object) -> None:
    """Moved memory with a framework step: a CuPy step whose raw kernel reads a weight
    buffer through a plain pointer parameter (parameter 1), and a make_inputs that "reloads
    the weights" into a new buffer and gives the old one back to the driver. The graph was
    captured with the old pointer: verify names the cause, the node and the parameter before
    it replays into freed memory."""
    _adapter("cupy")
    import cupy as cp

    kernel = cp.RawKernel(r"""
    extern "C" __global__ void weigh(const float* x, const float* w, float* y, int count) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < count) y[i] = x[i] * w[i % 1024];
    }""", "weigh")
    state = {"w": cp.ones(1 << 22, dtype=cp.float32)}  # 16 MiB: an allocation of its own

    def step(x: Any, out: Any) -> Any:
        kernel(((x.size + 255) // 256,), (256,), (x, state["w"], out, np.int32(x.size)))
        return out

    def make_inputs(n: int) -> tuple[Any, Any]:
        old = state["w"]
        state["w"] = cp.full(1 << 22, 2.0, dtype=cp.float32)  # the reloaded weights
        del old
        cp.get_default_memory_pool().free_all_blocks()  # the old buffer back to the driver
        x = cp.random.default_rng(n).standard_normal((n, 1024), dtype=cp.float32)
        return x, cp.zeros_like(x)

    why = _moved_memory_reason(step, make_inputs, "cupy")
    assert "moved memory: kernel node 0 parameter 1 points outside every live allocation" \
        in why, why


def test_torch_weights_freed_after_capture_are_moved_memory_inside_a_struct(
        gpu_ctx: object) -> None:
    """Moved memory with a PyTorch step: its elementwise kernel gets the weight's pointer
    packed in an array parameter (a struct), not as a parameter of its own. make_inputs
    reloads the weights into a new tensor and empties PyTorch's cache, so the captured
    pointer's memory goes back to the driver: verify names the cause and the node."""
    _adapter("torch")
    import torch

    state = {"w": torch.ones(1 << 22, device="cuda")}  # 16 MiB: a segment of its own

    def step(x: Any, out: Any) -> Any:
        return torch.mul(x, state["w"][:1024], out=out)

    def make_inputs(n: int) -> tuple[Any, Any]:
        old = state["w"]
        state["w"] = torch.full((1 << 22,), 2.0, device="cuda")  # the reloaded weights
        del old
        torch.cuda.empty_cache()  # the old segment back to the driver
        x = torch.randn((n, 1024), device="cuda", generator=torch.Generator("cuda").manual_seed(n))
        return x, torch.zeros_like(x)

    why = _moved_memory_reason(step, make_inputs, "torch")
    assert "moved memory: kernel node 0 parameter" in why and "live allocation" in why, why


@pytest.mark.parametrize("framework", ["torch", "cupy", "cuda.core"])
def test_padding_with_the_real_rows_repeated_on_each_adapter(gpu_ctx: object,
                                                             framework: str) -> None:
    adapter = _adapter(framework)
    host = np.arange(12, dtype=np.int64).reshape(6, 2)
    if framework == "torch":
        import torch

        static = (torch.full((6, 2), 99, device="cuda", dtype=torch.int64),)
        values: tuple[Any, ...] = (torch.as_tensor(host[:4], device="cuda"),)
    elif framework == "cupy":
        import cupy

        static = (cupy.full((6, 2), 99, dtype=cupy.int64),)
        values = (cupy.asarray(host[:4]),)
    else:
        static = adapter.static_inputs((np.full((6, 2), 99, dtype=np.int64),))
        values = (host[:4],)
    adapter.pad_into(static, values, 4, (None,))
    got = adapter.to_numpy(static[0])
    assert (got == np.concatenate([host[:4], host[:2]])).all(), got
    adapter.pad_into(static, values, 4, (-1,))
    got = adapter.to_numpy(static[0])
    assert (got[:4] == host[:4]).all() and (got[4:] == -1).all(), got
    if framework == "cuda.core":
        static[0].buffer.free()
