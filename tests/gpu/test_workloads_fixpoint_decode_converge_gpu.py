"""GPU tier for fixpoint, decode and converge: at the edges of several capacity classes and
at 2^22, the captured (or built) graph and the eager stream path both match the numpy
reference, a replay starts afresh, and the node counts match the workloads' predictions.

Before each checked run the outputs are poisoned (NaN bits, an impossible label, a state
that must be reset), so a run that skips work cannot pass on an earlier run's answer.

converge runs at 2^22 too: its graph has diameter O(log n) by construction (heap trees plus
random chords, see graphcert/workloads/fixpoint.py), so the loop ends after ~8 rounds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from graphcert.cuda.builder import GraphBuilder
from graphcert.cuda.context import RunContext
from graphcert.cuda.graph import Graph, capture
from graphcert.cuda.memory import DeviceBuffer
from graphcert.cuda.snapshot import read_snapshot
from graphcert.cuda.stream import Stream
from graphcert.model import NodeKind
from graphcert.outputs import mismatches
from graphcert.workloads.converge import Converge
from graphcert.workloads.decode import Decode
from graphcert.workloads.fixpoint import Fixpoint

pytestmark = pytest.mark.gpu

SIZES = [0, 1, 255, 256, 257, 65535, 65536, 65537, 2**22]
_POISON = 0x7FC00000  # a float32 NaN; as a u32 label, far above any n here


def capacity_of(n: int) -> int:
    return 1 << (max(n, 1) - 1).bit_length()


def _outputs_of(workload: Any) -> list[DeviceBuffer]:
    if isinstance(workload, Decode):
        return [workload._bufs["x"]]
    buffers = list(workload._labels)
    if isinstance(workload, Converge):
        buffers.append(workload._state)
    return buffers


def _poison(workload: Any, stream: Stream) -> None:
    for buf in _outputs_of(workload):
        buf.memset_u32_async(_POISON, buf.nbytes // 4, stream)
    stream.synchronize()


def _check(workload: Any, n: int, want: dict[str, Any], what: str) -> None:
    problems = mismatches(workload.outputs(n), want, workload.tolerance)
    assert problems == [], f"{workload.name} n={n} {what}: {problems}"


def _run_graph_twice(graph: Graph, workload: Any, stream: Stream) -> None:
    """Poison, then two launches: the second proves a replay starts from the inputs."""
    exe = graph.instantiate()
    try:
        _poison(workload, stream)
        exe.launch(stream)
        exe.launch(stream)
        stream.synchronize()
    finally:
        exe.destroy()


def _check_eager(workload: Any, stream: Stream, n: int, want: dict[str, Any]) -> None:
    """Poison, run record() straight onto the stream, compare with the reference."""
    _poison(workload, stream)
    workload.record(stream, n)
    stream.synchronize()
    _check(workload, n, want, "eager")


CAPTURED: list[Any] = [
    pytest.param(Fixpoint, id="fixpoint"),
    pytest.param(lambda: Fixpoint(iterations=3), id="fixpoint-k3"),  # unconverged, odd K
    pytest.param(Decode, id="decode"),
]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("make", CAPTURED)
def test_captured_and_eager_runs_match_reference(gpu_ctx: RunContext, stream: Stream,
                                                 make: Callable[[], Any], n: int) -> None:
    workload = make()
    capacity = capacity_of(n)
    workload.setup(gpu_ctx, capacity)
    try:
        want = workload.reference(n)
        graph = capture(stream, lambda: workload.record(stream, n), "global")
        try:
            assert read_snapshot(graph).counts() == workload.predict(capacity)
            _run_graph_twice(graph, workload, stream)
            _check(workload, n, want, "graph")
        finally:
            graph.destroy()
        _check_eager(workload, stream, n, want)
    finally:
        workload.teardown()
        gpu_ctx.release_buffers()


@pytest.mark.parametrize("n", SIZES)
def test_converge_while_loop_matches_reference(gpu_ctx: RunContext, stream: Stream,
                                               n: int) -> None:
    workload = Converge()
    capacity = capacity_of(n)
    workload.setup(gpu_ctx, capacity)
    try:
        want = workload.reference(n)
        builder = GraphBuilder()
        try:
            workload.build(builder, n)
            snapshot = read_snapshot(builder.graph)
            assert snapshot.counts() == workload.predict(capacity)
            (loop,) = [x for x in snapshot.nodes if x.kind is NodeKind.CONDITIONAL]
            assert loop.attrs.get("type") == "while", loop.attrs
            _run_graph_twice(builder.graph, workload, stream)
            _check(workload, n, want, "graph")
        finally:
            builder.graph.destroy()
        _check_eager(workload, stream, n, want)
    finally:
        workload.teardown()
        gpu_ctx.release_buffers()


@pytest.mark.parametrize("make", [Fixpoint, Decode, Converge])
def test_lower_and_upper_edge_of_a_class_share_one_shape(gpu_ctx: RunContext,
                                                         stream: Stream,
                                                         make: Callable[[], Any]) -> None:
    """The sizing rule on the real graphs: n = 257 and n = 512 differ in parameters only."""
    workload = make()
    workload.setup(gpu_ctx, 512)
    hashes = []
    try:
        for n in (257, 512):
            if isinstance(workload, Converge):
                builder = GraphBuilder()
                workload.build(builder, n)
                graph = builder.graph
            else:
                graph = capture(stream, lambda n=n: workload.record(stream, n), "global")
            try:
                snapshot = read_snapshot(graph)
                hashes.append((snapshot.topology_hash, snapshot.shape_hash))
            finally:
                graph.destroy()
    finally:
        workload.teardown()
        gpu_ctx.release_buffers()
    assert hashes[0] == hashes[1]
