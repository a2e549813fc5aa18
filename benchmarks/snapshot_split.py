"""Where a framework step's snapshot goes, per bucket (the PyTorch example over vllm:136):
torch's graph handle (graph_ref), the driver read (read_raw), the canonical order and
fingerprints (snapshot_from_raw) and the whole adapter.snapshot, medians of 40 in µs; at
bucket 64 also single cuda.bindings calls (medians of 200). Needs a GPU and PyTorch.

    PYTHONPATH=. python benchmarks/snapshot_split.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _timing import median_s  # noqa: E402


def median_us(f: Callable[[], Any], n: int = 40) -> float:
    return median_s(f, n) * 1e6


def single_calls(address: int) -> None:
    """Single driver calls on the graph at `address`, medians of 200."""
    from cuda.bindings import driver

    from graphcert.cuda.graph import node_list
    from graphcert.cuda.handles import graph_from_address

    handle = graph_from_address(address)
    node = node_list(handle)[0]
    params = driver.cuGraphKernelNodeGetParams(node)[1]
    priority = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PRIORITY
    calls: dict[str, Callable[[], Any]] = {
        "cuGraphGetNodes x2 (node_list)": lambda: node_list(handle),
        "cuGraphNodeGetType": lambda: driver.cuGraphNodeGetType(node),
        "cuGraphKernelNodeGetParams": lambda: driver.cuGraphKernelNodeGetParams(node),
        "cuGraphKernelNodeGetAttribute(priority)":
            lambda: driver.cuGraphKernelNodeGetAttribute(node, priority),
        "cuGraphGetEdges(count)": lambda: driver.cuGraphGetEdges(handle, 0),
        "cuCtxGetCurrent": driver.cuCtxGetCurrent,
        "cuFuncGetName": lambda: driver.cuFuncGetName(params.func),
        "cuFuncGetParamInfo(0)": lambda: driver.cuFuncGetParamInfo(params.func, 0),
    }
    for name, call in calls.items():
        print(f"   {name:45s} {median_us(call, 200):7.2f} us")


def main() -> None:
    from graphcert.buckets import parse_buckets
    from graphcert.cuda.handles import current_context, graph_from_address
    from graphcert.cuda.snapshot import read_raw
    from graphcert.model import snapshot_from_raw
    from graphcert.run.steps import StepVerifier, open_adapter
    from graphcert.sources.detect import graph_ref
    from graphcert.workloads.registry import load

    step = load(str(ROOT / "examples/steps/torch_decode.py:DECODE")).step()
    verifier = StepVerifier(step, "split", open_adapter(step, 0), 4, 0)
    verifier.prepare()
    print("bucket nodes  graph_ref  read_raw  model  whole (us, median of 40)")
    for capacity in parse_buckets("vllm:136"):
        captured: Any = verifier.capture(capacity)[0]  # the framework's own (a TorchCaptured)
        ref = graph_ref(captured.graph)

        def read(ref: Any = ref) -> Any:
            with current_context(ref.device):
                return read_raw(graph_from_address(ref.address))[0]

        raw = read()
        timings = [median_us(partial(graph_ref, captured.graph)), median_us(read),
                   median_us(partial(snapshot_from_raw, raw)),
                   median_us(partial(verifier.adapter.snapshot, captured, "split"))]
        print(f"{capacity:6d} {len(raw.nodes):5d} {timings[0]:9.1f} {timings[1]:9.1f} "
              f"{timings[2]:6.1f} {timings[3]:6.1f}")
        if capacity == 64:
            single_calls(ref.address)
        captured.release()


if __name__ == "__main__":
    main()
