"""A small decode server loop for `graphcert record` (issue 32): a PyTorch model, a stream of
requests whose batch sizes come from a fixed seed, one CUDA graph per vLLM-style bucket,
each batch padded up to its bucket and replayed.

    graphcert record -- python examples/record/serve_torch.py
    graphcert record -- python examples/record/serve_torch.py --fallback      # one bucket eager
    graphcert record -- python examples/record/serve_torch.py --recapture 200 # churn

--fallback leaves bucket 16 out of the dispatch table, so sizes 9..16 run eager (the vLLM
bug: graphs captured but never dispatched); --recapture N captures bucket 8 again every N
steps (llama.cpp's warm-up reset). Requests' inputs are made before the first capture and
copied into the graph's static input (a device-to-device copy, not a kernel), so the good run
launches no kernel one by one once it serves. The eager path runs inside an NVTX range
("eager b16"), so the recording names the code that fell back.
"""

from __future__ import annotations

import argparse
import random
import time

import torch

BUCKETS = (1, 2, 4, 8, 16, 24, 32, 48, 64)  # vLLM's smallest capture sizes
HIDDEN, LAYERS = 1024, 4
LEFT_OUT = 16  # --fallback: this bucket has no graph
RECAPTURED = 8  # --recapture: this bucket is captured again
POOL = 256  # distinct requests' inputs, made before the first capture and reused in turn


def model() -> torch.nn.Module:
    torch.manual_seed(0)
    layers: list[torch.nn.Module] = []
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.GELU()]
    return torch.nn.Sequential(*layers).cuda().half().eval()


class Bucket:
    """One bucket's graph with its static input and output."""

    def __init__(self, net: torch.nn.Module, size: int, pool: object) -> None:
        self.size = size
        # empty, not zeros: a recapture in steady state launches no fill kernel
        self.x = torch.empty(size, HIDDEN, device="cuda", dtype=torch.float16)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, pool=pool):
            self.y = net(self.x)


def warm_up(net: torch.nn.Module) -> None:
    """cuBLAS handles and workspaces on a side stream, as PyTorch asks before capture."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for size in BUCKETS:
            net(torch.zeros(size, HIDDEN, device="cuda", dtype=torch.float16))
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fallback", action="store_true",
                        help=f"leave bucket {LEFT_OUT} out of the dispatch table (runs eager)")
    parser.add_argument("--recapture", type=int, default=0, metavar="N",
                        help=f"capture bucket {RECAPTURED} again every N steps")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    sizes = [rng.randint(1, BUCKETS[-1]) for _ in range(args.steps)]
    start = time.perf_counter()
    with torch.inference_mode():
        net = model()
        requests = torch.randn(POOL, BUCKETS[-1], HIDDEN, device="cuda", dtype=torch.float16)
        warm_up(net)
        pool = torch.cuda.graph_pool_handle()
        table = {b: Bucket(net, b, pool) for b in BUCKETS
                 if not (args.fallback and b == LEFT_OUT)}
        eager = replays = 0
        print("serve_torch: serving", flush=True)  # graphs are captured (a test waits for this)
        for step, n in enumerate(sizes):
            if args.recapture and step and step % args.recapture == 0:
                table.pop(RECAPTURED, None)  # freed first (its executable destroyed), as a
                entry = None  # warm-up reset does, then captured and instantiated again
                table[RECAPTURED] = Bucket(net, RECAPTURED, pool)
            bucket = next(b for b in BUCKETS if b >= n)
            entry = table.get(bucket)
            if entry is None:  # no graph for this bucket: run the model eagerly
                with torch.cuda.nvtx.range(f"eager b{bucket}"):
                    net(requests[step % POOL, :n])
                eager += 1
                continue
            entry.x[:n].copy_(requests[step % POOL, :n])  # rows n.. keep stale values (padding)
            entry.graph.replay()
            replays += 1
        torch.cuda.synchronize()
    print(f"serve_torch: {args.steps} steps, {replays} graph replays, {eager} eager, "
          f"{len(BUCKETS) - args.fallback} buckets, {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
