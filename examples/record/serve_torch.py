"""A small decode server loop for `graphcert record`: a PyTorch model, a stream of requests
whose batch sizes come from a fixed seed, one CUDA graph per vLLM-style bucket, each batch
padded up to its bucket and replayed.

    graphcert record -- python examples/record/serve_torch.py
    graphcert record -- python examples/record/serve_torch.py --fallback      # one bucket eager
    graphcert record -- python examples/record/serve_torch.py --recapture 200 # churn
    graphcert record -- python examples/record/serve_torch.py --engine-process
    graphcert record -- python examples/record/serve_torch.py --workers 2     # 2 GPUs
    python examples/record/serve_torch.py --steps 20000 --step-time           # the loop's cost

--fallback leaves bucket 16 out of the dispatch table, so sizes 9..16 run eager (the vLLM
bug: graphs captured but never dispatched); --recapture N captures bucket 8 again every N
steps (llama.cpp's warm-up reset). Requests' inputs are made before the first capture and
copied into the graph's static input (a device-to-device copy, not a kernel), so the good run
launches no kernel one by one once it serves. The eager path runs inside an NVTX range
("eager b16"), so the recording names the code that fell back.

--engine-process serves in ONE child started with multiprocessing's spawn context (vLLM V1's
engine core): the parent never touches CUDA, waits, and exits with the child's exit code.
--workers N serves in N spawned children, worker i on cuda:i with seed+i (tensor-parallel
ranks); fewer GPUs than N is refused in one line (exit 2). Every process that serves prints
one ground-truth line for the tests (tests/gpu/test_record_processes_gpu.py):

    graphcert-truth {"pid": P, "device": D, "graphs": G, "graph_launches": L,
                     "eager_steps": E, "eager_range": "eager b16" or null}

(graphs: executables instantiated, buckets captured plus recaptures; graph_launches:
replays.) --step-time prints the serving loop's mean step time (`serve_torch: step_us X`,
benchmarks/record_overhead.py reads it).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import time

import torch

BUCKETS = (1, 2, 4, 8, 16, 24, 32, 48, 64)  # vLLM's smallest capture sizes
HIDDEN, LAYERS = 1024, 4
LEFT_OUT = 16  # --fallback: this bucket has no graph
RECAPTURED = 8  # --recapture: this bucket is captured again
POOL = 256  # distinct requests' inputs, made before the first capture and reused in turn
TRUTH = "graphcert-truth"  # the ground-truth line's prefix (tests read it)


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


def serve(args: argparse.Namespace, seed: int) -> None:
    """The serving loop on the current device; prints the truth line and the summary."""
    rng = random.Random(seed)
    sizes = [rng.randint(1, BUCKETS[-1]) for _ in range(args.steps)]
    start = time.perf_counter()
    with torch.inference_mode():
        net = model()
        requests = torch.randn(POOL, BUCKETS[-1], HIDDEN, device="cuda", dtype=torch.float16)
        warm_up(net)
        pool = torch.cuda.graph_pool_handle()
        table = {b: Bucket(net, b, pool) for b in BUCKETS
                 if not (args.fallback and b == LEFT_OUT)}
        graphs = len(table)
        eager = replays = 0
        eager_range: str | None = None
        print("serve_torch: serving", flush=True)  # graphs are captured (a test waits for this)
        loop_start = time.perf_counter()
        for step, n in enumerate(sizes):
            if args.recapture and step and step % args.recapture == 0:
                table.pop(RECAPTURED, None)  # freed first (its executable destroyed), as a
                entry = None  # warm-up reset does, then captured and instantiated again
                table[RECAPTURED] = Bucket(net, RECAPTURED, pool)
                graphs += 1
            bucket = next(b for b in BUCKETS if b >= n)
            entry = table.get(bucket)
            if entry is None:  # no graph for this bucket: run the model eagerly
                eager_range = f"eager b{bucket}"
                with torch.cuda.nvtx.range(eager_range):
                    net(requests[step % POOL, :n])
                eager += 1
                continue
            entry.x[:n].copy_(requests[step % POOL, :n])  # rows n.. keep stale values (padding)
            entry.graph.replay()
            replays += 1
        torch.cuda.synchronize()  # the loop's end: the only synchronisation inside the timing
        loop_s = time.perf_counter() - loop_start
    truth = {"pid": os.getpid(), "device": torch.cuda.current_device(), "graphs": graphs,
             "graph_launches": replays, "eager_steps": eager, "eager_range": eager_range}
    print(f"{TRUTH} {json.dumps(truth)}", flush=True)
    if args.step_time:
        print(f"serve_torch: step_us {loop_s / max(args.steps, 1) * 1e6:.3f}", flush=True)
    print(f"serve_torch: {args.steps} steps, {replays} graph replays, {eager} eager, "
          f"{len(BUCKETS) - args.fallback} buckets, {time.perf_counter() - start:.2f} s",
          flush=True)


def _child(args: argparse.Namespace, device: int) -> None:
    """A spawned process's entry: the engine core (device 0) or tensor-parallel rank i."""
    torch.cuda.set_device(device)
    serve(args, args.seed + device)


def _visible_gpus() -> int:
    """GPUs this process may use, counted by NVML where PyTorch can (so the parent makes no
    CUDA context: the workers are the only processes that touch CUDA), else by CUDA."""
    by_nvml = getattr(torch.cuda, "_device_count_nvml", None)
    count = by_nvml() if by_nvml is not None else -1
    return count if count >= 0 else torch.cuda.device_count()


def _code(exitcode: int | None) -> int:
    """A child's exit status as a shell reports it (128 + signal when a signal ended it)."""
    if exitcode is None:
        return 1
    return 128 - exitcode if exitcode < 0 else exitcode


def spawn(args: argparse.Namespace, devices: range) -> int:
    """Serves in one spawned child per device, waits for all; the first failure's status."""
    ctx = multiprocessing.get_context("spawn")
    children = [ctx.Process(target=_child, args=(args, d), name=f"serve-{d}") for d in devices]
    for child in children:
        child.start()
    for child in children:
        child.join()
    return next((_code(c.exitcode) for c in children if c.exitcode != 0), 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fallback", action="store_true",
                        help=f"leave bucket {LEFT_OUT} out of the dispatch table (runs eager)")
    parser.add_argument("--recapture", type=int, default=0, metavar="N",
                        help=f"capture bucket {RECAPTURED} again every N steps")
    parser.add_argument("--step-time", action="store_true",
                        help="print the serving loop's mean step time in microseconds")
    procs = parser.add_mutually_exclusive_group()
    procs.add_argument("--engine-process", action="store_true",
                       help="serve in one spawned child (the parent never touches CUDA)")
    procs.add_argument("--workers", type=int, default=0, metavar="N",
                       help="serve in N spawned children, worker i on cuda:i with seed+i")
    args = parser.parse_args()
    if args.engine_process:
        sys.exit(spawn(args, range(1)))
    if args.workers:
        have = _visible_gpus()
        if have < args.workers:
            print(f"serve_torch: --workers {args.workers} needs {args.workers} GPUs, this "
                  f"machine shows {have}; ask for at most {have}", file=sys.stderr)
            sys.exit(2)
        sys.exit(spawn(args, range(args.workers)))
    serve(args, args.seed)


if __name__ == "__main__":
    main()
