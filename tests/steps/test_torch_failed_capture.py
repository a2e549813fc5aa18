"""After a capture that fails, the PyTorch adapter leaves torch as it was (issue 33: on an H100
the next bucket's torch.randn raised "Offset increment outside graph capture encountered
unexpectedly"). No torch here: a synthetic stand-in records what the adapter asks of it; the
GPU test (tests/gpu/test_steps_gpu.py) checks the real one."""

from __future__ import annotations

import warnings
from types import SimpleNamespace
from typing import Any

import pytest

from graphcert.frameworks.torch_adapter import TorchAdapter

POOL = (0, 7)  # a synthetic pool handle


class SyntheticGraph:
    """A torch.cuda.CUDAGraph stand-in; `ended` says whether capture_end got to its end."""

    def __init__(self, calls: list[Any], ended: bool = False, name: str = "failed graph"
                 ) -> None:
        self.calls, self.ended, self.name = calls, ended, name

    def pool(self) -> Any:
        if not self.ended:
            raise RuntimeError("Called CUDAGraph::pool() without a preceding successful capture.")
        return POOL

    def reset(self) -> None:
        self.calls.append(f"{self.name} reset")

    def capture_begin(self) -> None:
        self.calls.append("repair begin")

    def capture_end(self) -> None:
        warnings.warn("The CUDA Graph is empty.", UserWarning, stacklevel=1)
        self.calls.append("repair end")


class SyntheticStreamCtx:
    def __init__(self, calls: list[Any]) -> None:
        self.calls = calls

    def __enter__(self) -> None:
        self.calls.append("side stream")

    def __exit__(self, *_: object) -> None:
        self.calls.append("side stream done")


def _adapter(calls: list[Any], *, private: bool = True, failing: bool = False) -> TorchAdapter:
    def private_call(name: str) -> Any:
        def call(device: int, pool: Any) -> None:
            calls.append((name, device, pool))
            if failing:
                raise RuntimeError("not currently recording to that pool")
        return call

    cuda = SimpleNamespace(
        set_stream=lambda s: calls.append(("set_stream", s)),
        Stream=lambda: "side",
        stream=lambda _s: SyntheticStreamCtx(calls),
        CUDAGraph=lambda keep_graph: SyntheticGraph(calls, name="repair"))
    names = ("_cuda_endAllocateToPool", "_cuda_releasePool") if private else ()
    fake = SimpleNamespace(cuda=cuda, _C=SimpleNamespace(**{n: private_call(n) for n in names}))
    adapter = TorchAdapter.__new__(TorchAdapter)  # no torch here: skip __init__'s checks
    adapter.torch, adapter.device = fake, 3
    return adapter


def test_a_capture_that_did_not_end_is_undone() -> None:
    calls: list[Any] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the empty repair capture's warning is not the user's
        _adapter(calls)._undo_failed_capture(SyntheticGraph(calls), POOL, "user stream")
    assert calls == [("set_stream", "user stream"),
                     ("_cuda_endAllocateToPool", 3, POOL), ("_cuda_releasePool", 3, POOL),
                     "failed graph reset",
                     "side stream", "repair begin", "repair end", "repair reset",
                     "side stream done"]


def test_a_capture_that_ended_is_left_to_torch() -> None:
    # The step raised but capture_end succeeded: torch undid its own state, and releasing the
    # pool here as well would release it twice (graph.reset() releases it).
    calls: list[Any] = []
    _adapter(calls)._undo_failed_capture(SyntheticGraph(calls, ended=True), POOL, "user stream")
    assert calls == [("set_stream", "user stream")]


@pytest.mark.parametrize("private", [True, False])
def test_undoing_is_best_effort(private: bool) -> None:
    # Private calls that raise (or a torch without them) still leave the generator repaired.
    calls: list[Any] = []
    _adapter(calls, private=private, failing=True)._undo_failed_capture(
        SyntheticGraph(calls), POOL, "user stream")
    assert calls[-5:] == ["side stream", "repair begin", "repair end", "repair reset",
                          "side stream done"]
    assert (("_cuda_releasePool", 3, POOL) in calls) is private
