"""GPU tier for the built-in workloads and the examples: every size's captured graph and its
eager recording agree with numpy, and the graph's node counts match the prediction."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from graphcert.cuda.context import RunContext
from graphcert.cuda.graph import capture
from graphcert.cuda.snapshot import read_snapshot
from graphcert.cuda.stream import Stream
from graphcert.outputs import mismatches
from graphcert.workloads import registry
from graphcert.workloads.loaded import hooks_of

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
SIZES = [0, 1, 255, 256, 257, 65535, 65536, 65537, 2**22]
BUILTINS = ["scan", "join", "join[arity=2]", "chain", "chain[kernels=100]", "resident"]


def class_of(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def _nonzero(counts: dict[str, int]) -> dict[str, int]:
    return {kind: count for kind, count in counts.items() if count}


def _run_graph(ctx: RunContext, stream: Stream, workload: Any, n: int) -> tuple[list[str],
                                                                              dict[str, int]]:
    """Capture record(n) in global mode, replay it twice (clears inside the graph must make
    replays idempotent), compare; returns (mismatches, node counts by kind)."""
    workload.setup(ctx, class_of(n))
    try:
        graph = capture(stream, lambda: workload.record(stream, n), "global")
        try:
            counts = read_snapshot(graph).counts()
            exe = graph.instantiate()
            try:
                exe.launch(stream)
                exe.launch(stream)
                stream.synchronize()
            finally:
                exe.destroy()
        finally:
            graph.destroy()
        return mismatches(workload.outputs(n), workload.reference(n),
                          hooks_of(workload).tolerance()), counts
    finally:
        workload.teardown()
        ctx.release_buffers()


def _run_eager(ctx: RunContext, stream: Stream, workload: Any, n: int) -> list[str]:
    """record(n) straight on the stream, no graph. A fresh setup poisons the outputs, so the
    graph run before cannot leave a right answer behind."""
    workload.setup(ctx, class_of(n))
    try:
        workload.record(stream, n)
        stream.synchronize()
        return mismatches(workload.outputs(n), workload.reference(n),
                          hooks_of(workload).tolerance())
    finally:
        workload.teardown()
        ctx.release_buffers()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("ref", BUILTINS)
def test_builtin_graph_and_eager_match_numpy(gpu_ctx: RunContext, stream: Stream, ref: str,
                                             n: int) -> None:
    workload = registry.load(ref).native().workload
    problems, counts = _run_graph(gpu_ctx, stream, workload, n)
    assert not problems, f"{ref} n={n} graph: {problems}"
    predicted = hooks_of(workload).predict(class_of(n))
    assert _nonzero(counts) == _nonzero(predicted or {}), (ref, n, counts)
    problems = _run_eager(gpu_ctx, stream, workload, n)
    assert not problems, f"{ref} n={n} eager: {problems}"


def test_scan_graph_shape_is_the_same_across_a_class(gpu_ctx: RunContext,
                                                     stream: Stream) -> None:
    """Sizing rule: the recorded kernel geometry depends on the class, not on n."""
    scan = registry.load("scan").native().workload
    shapes = []
    scan.setup(gpu_ctx, 2**17)
    try:
        for n in (65537, 100_000, 2**17):
            graph = capture(stream, functools.partial(scan.record, stream, n))
            try:
                snap = read_snapshot(graph)
            finally:
                graph.destroy()
            shapes.append(sorted((node.attrs["name"], tuple(node.attrs["grid"]))
                                 for node in snap.nodes))
    finally:
        scan.teardown()
        gpu_ctx.release_buffers()
    assert shapes[0] == shapes[1] == shapes[2]
    assert len(shapes[0]) == 5


@pytest.mark.parametrize("n", [0, 1000, 65537])
def test_cuda_core_example(gpu_ctx: RunContext, stream: Stream, n: int) -> None:
    ref = f"{ROOT / 'examples' / 'cuda_core_saxpy.py'}:Saxpy[a=0.5]"
    saxpy = registry.load(ref).native().workload
    problems, counts = _run_graph(gpu_ctx, stream, saxpy, n)
    assert not problems, problems
    assert _nonzero(counts) == {"kernel": 1}
    assert not _run_eager(gpu_ctx, stream, saxpy, n)


@pytest.mark.parametrize("n", [1, 1000, 65537])
def test_cupy_example(gpu_ctx: RunContext, stream: Stream, n: int) -> None:
    pytest.importorskip("cupy")
    scan = registry.load(f"{ROOT / 'examples' / 'cupy_scan.py'}:CupyScan").native().workload
    problems, counts = _run_graph(gpu_ctx, stream, scan, n)
    assert not problems, problems
    # capacity 1 is a lone memset; above it, copies and add kernels
    assert counts.get("memset") == 1 and (n == 1 or counts.get("kernel", 0) >= 1), counts
    assert not _run_eager(gpu_ctx, stream, scan, n)
