"""Replay-time methods probe: one graph replay's device time by every method graphcert uses or
could use, side by side, to tell why `profile` and `bench` disagree.

    python3 benchmarks/replay_methods.py [--workloads chain[kernels=1000],chain,scan,converge]
                                         [--torch] [--replays 200] [--json FILE]
                                         [--orders BNBHBb,NBHBb,BUHBb]

Rows per workload (chain[kernels=N] captured at size 1, any other built-in at bench's default
size 1<<16; with --torch, examples/steps/torch_decode.py:DECODE at buckets 1 and 8):
  1  back-to-back events, fresh context (never settled), L2 warm (profile's method until it
     timed held replays)
  2  the same after the harness settled the context (h1: 1 against 2)
  3  held: events around one launch queued behind the blocking kernel, settled, L2 warm
     (3r: again after rows 4-5; 3n: the graph instantiated again and first launched after
     the context settled; 3s: on the stream rows 1-2 used; 3k: first thing in the
     kernel-trace child, where the graph's first launch came after settling)
  4  held, L2 flushed (bench's cold device figure; profile's held replays by default, row 3
     with --no-flush-l2)
  5  hot: K launches between two events behind one blocker, per launch (bench's K, and K=10)
  6  GRAPH_TRACE span (device start..end of each launch record), the graph instantiated after
     GRAPH_TRACE was enabled, replays held
  7  held events with GRAPH_TRACE on (its distortion: x of row 3)
  8  kernel-traced span (first kernel start..last kernel end per launch), replays held
  9  held events with kernel tracing on (its distortion: x of row 3, and of row 3k, taken
     in the same process just before tracing)
  10 host seconds of one launch call (perf_counter around it), untraced (a) and traced (b)
Every row but 10 prints its ratio to row 3. Then the L2 flush experiment (h3): graphs of
gc_empty (touches no memory) and of chain's store kernels at 16 and 1000 nodes, held, L2 warm
and flushed alternately, and the flush's extra per node.

--orders runs sequences of steps on the first workload, each in a fresh process, and prints
each timing step's median: B back-to-back on the graph's own stream, b back-to-back on the
harness's stream, H held, N open a harness that settles the context, U one that does not, R
instantiate the graph again. On an H200, chain[kernels=1000] (one process per sequence):
B N B H b read 598, 598, 774, 775 µs; N B H B b 598, 597, 598, 598; B U H B b 598, 597, 598,
598: a graph first launched before the context settled ran slower after it once launched
from another stream (10 launches before settling were enough).

Process layout (so no untraced row runs after CUPTI was enabled in its process): every subject
runs in two child processes, one after the other. The first ("plain") takes rows 1-5, 3r, 3n,
3s and 10a with CUPTI never enabled, then enables GRAPH_TRACE alone (as `profile --span`
does: kernel, copy and set activity off) last for rows 6-7. The second
("kernel") takes row 3k untraced first, then rows 8, 9 and 10b with profile's kernel
activity. The flush experiment runs in a child of its own, without CUPTI. Each child opens
its own context, so row 1 of every subject is a fresh one. This process runs no CUDA.
Prints figures only; nothing is written except with --json FILE.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from _replay_table import (  # noqa: E402  (after the path set-up above)
    ORDER_STEPS,
    Figure,
    FlushCase,
    figure_json,
    format_flush,
    format_rows,
)

DEFAULT_WORKLOADS = "chain[kernels=1000],chain,scan,converge"
TORCH_STEP = "examples/steps/torch_decode.py:DECODE"
TORCH_BUCKETS = (1, 8)
BENCH_SIZE = 1 << 16
FLUSH_NODES = (16, 1000)
CHILD_TIMEOUT_S = 120


def size_of(ref: str) -> int:
    """chain[kernels=N] at size 1 (its kernels count, not its size, is the work), any other
    built-in at bench's default size."""
    return 1 if ref.startswith("chain[") else BENCH_SIZE


def run_child(job: dict[str, Any]) -> dict[str, Any]:
    """Run one job in a fresh Python process; its result, or {"error": last line}."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(job)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"error": f"child timed out after {CHILD_TIMEOUT_S} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"error": f"exit {done.returncode}: {tail}"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def subject_table(label: str, plain: dict[str, Any], kernel: dict[str, Any]) -> list[str]:
    """The table of one subject from its two children's results (an error as a line)."""
    figures: dict[str, Figure] = {}
    nodes = plain.get("nodes", kernel.get("nodes", "?"))
    errors = [f"  {name} child failed: {got['error']}" for name, got in
              (("plain", plain), ("kernel", kernel)) if "error" in got]
    for got in (plain, kernel):
        for key, raw in got.get("rows", {}).items():
            figures[key] = figure_json(raw)
    for key in ("8", "9"):  # kernel tracing's distortion within its own process too
        if key in figures and "3k" in figures:
            figures[key] = with_ratio(figures[key], figures["3k"], "3k")
    walls = [f"{got['wall_s']:.1f}" for got in (plain, kernel) if "wall_s" in got]
    title = f"{label} ({nodes} nodes; children took {' + '.join(walls) or '?'} s)"
    return format_rows(title, figures) + errors


def with_ratio(fig: Figure, base: Figure, key: str) -> Figure:
    """`fig` with its ratio to row `key` added to its note (where both were measured)."""
    if fig.skipped is not None or base.skipped is not None or not base.median_s:
        return fig
    note = "; ".join(x for x in (f"x{fig.median_s / base.median_s:.3f} of row {key}", fig.note)
                     if x)
    return replace(fig, note=note)


def order_line(order: str, got: dict[str, Any]) -> str:
    """One --orders sequence: each timing step's median (µs), in the order run."""
    if "error" in got:
        return f"order {order}: failed: {got['error']}"
    steps = " ".join(f"{step}:{Figure.of(samples).median_s * 1e6:,.1f}"
                     for step, samples in got["order"])
    return f"order {order} on {got['label']}: {steps}"


def flush_table(got: dict[str, Any]) -> list[str]:
    if "error" in got:
        return [f"L2 flush experiment failed: {got['error']}"]
    cases = [FlushCase(c["label"], int(c["nodes"]), figure_json(c["warm"]),
                       figure_json(c["flushed"])) for c in got["flush"]]
    return format_flush(cases)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=DEFAULT_WORKLOADS,
                        help="comma-separated built-ins (default: %(default)s)")
    parser.add_argument("--torch", action="store_true",
                        help=f"also {TORCH_STEP} at buckets {TORCH_BUCKETS}")
    parser.add_argument("--replays", type=int, default=200, help="samples a row")
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--no-flush-experiment", action="store_true")
    parser.add_argument("--orders", default="",
                        help="comma-separated step sequences (letters: "
                             + "; ".join(f"{k} {v}" for k, v in ORDER_STEPS.items())
                             + "), each run in a fresh process on the first workload, "
                               "e.g. BNBH,NBH,BUH")
    parser.add_argument("--json", type=Path, default=None, help="write every result here")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        from _replay_gpu import run_job

        print(json.dumps(run_job(json.loads(args.child))))
        return 0
    if args.replays < 20:
        print(f"--replays {args.replays} is too few for an interval: use 20 or more")
        return 2
    t0 = time.perf_counter()
    jobs: list[tuple[str, dict[str, Any]]] = []
    for ref in (w.strip() for w in args.workloads.split(",") if w.strip()):
        jobs.append((ref, {"workload": ref, "size": size_of(ref)}))
    if args.torch:
        if importlib.util.find_spec("torch") is None:
            print(f"{TORCH_STEP}: skipped: PyTorch is not installed")
        else:
            jobs += [(f"{TORCH_STEP} bucket {b}", {"step": TORCH_STEP, "size": b})
                     for b in TORCH_BUCKETS]
    results: dict[str, Any] = {"replays": args.replays, "subjects": {}}
    for label, job in jobs:
        common = {**job, "replays": args.replays, "device": args.device}
        plain = run_child({**common, "job": "plain"})
        kernel = run_child({**common, "job": "kernel"})
        results["subjects"][label] = {"plain": plain, "kernel": kernel}
        print("\n".join(subject_table(label, plain, kernel)), flush=True)
        print()
    first = jobs[0][1] if jobs else None
    for order in (o.strip() for o in args.orders.split(",") if o.strip()):
        if first is None or not set(order) <= set(ORDER_STEPS):
            print(f"--orders {order!r}: use the letters {''.join(ORDER_STEPS)}, with a "
                  f"workload to run them on")
            continue
        got = run_child({**first, "job": "order", "order": order, "replays": args.replays,
                         "device": args.device})
        results.setdefault("orders", {})[order] = got
        print(order_line(order, got))
    if not args.no_flush_experiment:
        flush = run_child({"job": "flush", "replays": args.replays, "device": args.device,
                           "nodes": list(FLUSH_NODES)})
        results["flush"] = flush
        print("\n".join(flush_table(flush)))
    print(f"\nwall {time.perf_counter() - t0:.1f} s")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
