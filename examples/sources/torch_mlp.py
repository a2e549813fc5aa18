"""A PyTorch decode-style MLP step captured as a CUDA graph, read by graphcert.

    python examples/sources/torch_mlp.py            # batch 8 and 16: inventory and diff

PyTorch frees a captured graph's definition once it is instantiated unless the CUDAGraph
is created with keep_graph=True; graphcert reads that definition (`raw_cuda_graph()`).
"""

from __future__ import annotations

from typing import Any

import graphcert

HIDDEN, FFN = 256, 1024


def capture(batch: int, seed: int = 0) -> tuple[Any, list[Any]]:
    """The graph of one fp16 MLP block at `batch` rows, and the tensors it uses (keep them
    alive as long as the graph)."""
    import torch

    torch.manual_seed(seed)
    block = torch.nn.Sequential(torch.nn.LayerNorm(HIDDEN), torch.nn.Linear(HIDDEN, FFN),
                                torch.nn.GELU(), torch.nn.Linear(FFN, HIDDEN))
    block = block.cuda().half().eval()
    x = torch.randn(batch, HIDDEN, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        side = torch.cuda.Stream()  # warm up off the default stream, as PyTorch advises
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                block(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph(keep_graph=True)
        with torch.cuda.graph(graph):
            y = block(x)
    return graph, [block, x, y]


def main() -> None:
    snaps = {}
    keep = []
    for batch in (8, 16):
        graph, tensors = capture(batch)
        keep.append((graph, tensors))
        snaps[batch] = graphcert.snapshot(graph, name=f"torch-mlp-b{batch}")
        s = snaps[batch]
        print(f"batch {batch}: {s.counts()} topology {s.topology_hash[:12]} "
              f"shape {s.shape_hash[:12]}")
        for node in s.nodes:
            if node.kind.value == "kernel":
                print(f"  {node.attrs['name'][:70]} grid {node.attrs['grid']}")
    print("\n".join(graphcert.diff(snaps[8], snaps[16]).summary_lines("b8 ", "b16 ")) or
          "batch 8 and 16: identical graphs")


if __name__ == "__main__":
    main()
