"""A small PyTorch graph with a fork, captured for the profile tests and the overhead probe
(tools/probes/profile_overhead_probe.py): x -> GEMM -> {relu on a side stream, GEMM} -> add,
fp16 512x512, so the two branches may overlap. PyTorch is passed in (imported by the caller)."""

from __future__ import annotations

from typing import Any


def capture_fork(torch: Any, *, keep_graph: bool = True) -> tuple[Any, Any]:
    """(the CUDAGraph, its output tensor): warmed up on a side stream, captured, and with
    keep_graph instantiated (so graphcert can read the graph)."""
    x = torch.randn(512, 512, device="cuda", dtype=torch.float16)
    w = torch.randn(512, 512, device="cuda", dtype=torch.float16)
    side = torch.cuda.Stream()

    def step() -> Any:
        h = x @ w
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            a = torch.relu(h)
        b = h @ w
        torch.cuda.current_stream().wait_stream(side)
        return a + b

    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(warm)
    g = torch.cuda.CUDAGraph(keep_graph=keep_graph)
    with torch.cuda.graph(g):
        out = step()
    if keep_graph:
        g.instantiate()
    return g, out
