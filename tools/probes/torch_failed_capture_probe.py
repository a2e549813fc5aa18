"""Device probe (issue 33): what a torch.cuda.graph capture that fails (a host read) leaves
behind in torch, and whether the PyTorch adapter's undo (graphcert.frameworks.torch_adapter,
_undo_failed_capture) puts it back. Prints facts, one line each; asserts nothing. Run it in a
process of its own (the first capture is left broken on purpose). On the GPU machine:
  PYTHONPATH=. python3 tools/probes/torch_failed_capture_probe.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from graphcert.frameworks.torch_adapter import TorchAdapter  # noqa: E402


def _try(label: str, fn: Callable[[], Any]) -> None:
    try:
        fn()
        print(f"{label}: ok")
    except Exception as exc:  # noqa: BLE001 - a probe prints what happened
        print(f"{label}: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")


def main() -> None:
    print("torch", torch.__version__, "cuda", torch.version.cuda,
          "private pool calls:", [n for n in ("_cuda_endAllocateToPool",
                                              "_cuda_endAllocateCurrentStreamToPool",
                                              "_cuda_releasePool") if hasattr(torch._C, n)])
    x = torch.zeros(4, 8, device="cuda")
    noisy = torch.cuda.CUDAGraph()
    with torch.cuda.graph(noisy):  # a graph drawing random numbers, captured before
        y = x + torch.rand_like(x)
    torch.cuda.synchronize()
    stream = torch.cuda.current_stream()
    gen = torch.cuda.default_generators[torch.cuda.current_device()]
    offset = gen.get_offset()
    pool = torch.cuda.graph_pool_handle()
    failed = torch.cuda.CUDAGraph(keep_graph=True)
    try:
        with torch.cuda.graph(failed, pool=pool):
            float(x.abs().max().item())
        print("capture with .item(): no error (unexpected)")
    except Exception as exc:  # noqa: BLE001
        print(f"capture with .item(): {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
    print("left behind: current stream restored:", torch.cuda.current_stream() == stream,
          "| generator offset unmoved:", gen.get_offset() == offset)
    _try("left behind: torch.randn", lambda: torch.randn(4, device="cuda"))
    _try("left behind: replay of the earlier graph", noisy.replay)

    adapter = TorchAdapter()
    adapter._undo_failed_capture(failed, pool, stream)
    print("after the adapter's undo: current stream restored:",
          torch.cuda.current_stream() == stream, "| generator offset unmoved:",
          gen.get_offset() == offset)
    _try("after the adapter's undo: torch.randn", lambda: torch.randn(4, device="cuda"))
    _try("after the adapter's undo: replay of the earlier graph", noisy.replay)

    def capture_again() -> None:
        again = torch.cuda.CUDAGraph()
        with torch.cuda.graph(again):
            x.mul_(1.0)
        again.replay()

    _try("after the adapter's undo: a new capture and replay", capture_again)
    torch.cuda.synchronize()
    print("earlier graph's output finite:", bool(torch.isfinite(y).all()))


if __name__ == "__main__":
    main()
