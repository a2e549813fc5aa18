"""`graphcert profile` and `graphcert.profile(...)`: replay a captured graph R times with CUPTI
activity on, join the kernel, memcpy and memset records to the graph's nodes and analyse them
(graphcert.profiling), and measure what tracing costs. Runs on a GPU.

Per class: the graph is captured as verify and bench capture it (a built-in's own capture, a
framework step's framework capture at its bucket), read into its canonical snapshot, and each
canonical node is given its CUPTI id (cupti.get_graph_node_id of its template node: the low 32
bits name the node in every instantiation's records). Then, in one process and on the replay
stream: WARMUP replays, `replays` replays with tracing off and `replays` with tracing on, each
replay between two CUDA events; the traced replays' records are the profile, and the median
event times of the two loops are the overhead. Untraced first: CUPTI, once enabled, may keep
hooks in the driver after it is disabled.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from graphcert.buckets import class_of
from graphcert.cuda.graph import Graph, GraphRef
from graphcert.cuda.snapshot import read_snapshot_indexed
from graphcert.cuda.stream import Event, Stream
from graphcert.cupti.activity import Activity
from graphcert.cupti.library import load as load_cupti
from graphcert.cupti.library import version as cupti_version
from graphcert.cupti.nodes import node_id
from graphcert.errors import InputError
from graphcert.kinds.profile.result import ProfiledClass, ProfileResult, ReplayOverhead
from graphcert.model import GraphSnapshot
from graphcert.options import Options
from graphcert.profiling import ActivityRecord, ProfileGraph, analyse, graph_of, join

if TYPE_CHECKING:
    from graphcert.cuda.context import RunContext
    from graphcert.frameworks.adapters import Captured
    from graphcert.frameworks.step import Step
    from graphcert.run.runnable import Runnable
    from graphcert.workloads.loaded import LoadedWorkload, NativeWorkload

DEFAULT_REPLAYS = 200
DEFAULT_SIZE = 1 << 16  # a built-in or user workload without --size/--classes: bench's default
STEP_BUCKETS = "vllm:64"  # a framework step's: graphcert.verify_step's and the pytest plugin's
MAX_REPLAYS = 100_000
WARMUP = 10  # untimed replays first: the first launches of an instantiated graph are slower


def check_replays(replays: object) -> int:
    """`replays` as a count of replays to trace (>= 1); InputError naming the fix otherwise."""
    if isinstance(replays, bool) or not isinstance(replays, int):
        raise InputError(f"replays={replays!r} is not a whole number",
                         hint=f"pass replays as an int from 1 to {MAX_REPLAYS:,} "
                              f"(default {DEFAULT_REPLAYS})")
    if not 1 <= replays <= MAX_REPLAYS:
        raise InputError(f"replays={replays:,} leaves nothing to profile" if replays < 1 else
                         f"replays={replays:,} is more than {MAX_REPLAYS:,}",
                         hint=f"replay the graph 1 to {MAX_REPLAYS:,} times "
                              f"(default {DEFAULT_REPLAYS})")
    return replays


@dataclass(frozen=True)
class ReadGraph:
    """A graph read for profiling: its snapshot and the profiled graph (nodes with ids)."""

    snapshot: GraphSnapshot
    graph: ProfileGraph


def read_graph(graph: Graph, meta: dict[str, object] | None = None) -> ReadGraph:
    """The snapshot of `graph` and each canonical node's CUPTI id. A graph with no kernel,
    memcpy or memset node is an InputError (nothing to time)."""
    snapshot, positions = read_snapshot_indexed(graph, meta)
    ids = [0] * snapshot.node_count
    for handle, index in positions.items():
        ids[index] = node_id(handle)
    return ReadGraph(snapshot, graph_of(snapshot, ids))


def time_replays(launch: Callable[[], None], stream: Stream, count: int) -> list[float]:
    """Device nanoseconds of each of `count` replays: a CUDA event before and after each
    launch on the replay stream, read once all are done."""
    events = [(Event(), Event()) for _ in range(count)]
    try:
        for before, after in events:
            before.record(stream)
            launch()
            after.record(stream)
        events[-1][1].synchronize()
        return [before.elapsed_s(after) * 1e9 for before, after in events]
    finally:
        for pair in events:
            for event in pair:
                event.destroy()


def trace(read: ReadGraph, launch: Callable[[], None], stream: Stream, replays: int, *,
          label: str, size: int, warmup: int = WARMUP) -> ProfiledClass:
    """Replay `launch` untraced then traced `replays` times each (see the module's
    docstring) and analyse the traced replays' records."""
    check_replays(replays)
    load_cupti()  # CUPTI missing: one line before any replay
    for _ in range(warmup):
        launch()
    stream.synchronize()
    untraced = time_replays(launch, stream, replays)
    with Activity() as activity:
        traced = time_replays(launch, stream, replays)
        stream.synchronize()
    records = [r.activity() for r in activity.records if r.in_graph]
    profile = analyse(join(records, read.graph, dropped=activity.dropped,
                           graph_instance=instance_of(records, read.graph)))
    overhead = ReplayOverhead(statistics.median(traced), statistics.median(untraced), replays,
                              len(records) / replays)
    return ProfiledClass(label, size, read.snapshot.topology_hash, profile, overhead)


def instance_of(records: Sequence[ActivityRecord], graph: ProfileGraph) -> int | None:
    """The graph instance (high 32 bits of graph_node_id) of the profiled graph's own nodes.

    The low 32 bits number a node within its graph (0, 1, ...: DEVICE_FACTS.md), so records of
    a child graph's or a conditional body's nodes can carry a top-level node's low bits. The
    instance whose records cover the most timed nodes (right kind) wins; on a tie the one with
    fewer records (a WHILE body runs once per iteration, the top level once per replay)."""
    kinds = {n.node_id: n.kind for n in graph.nodes if n.timed}
    covered: dict[int, set[int]] = {}
    counts: dict[int, int] = {}
    for rec in records:
        counts[rec.graph_instance] = counts.get(rec.graph_instance, 0) + 1
        if kinds.get(rec.node_id) == rec.kind:
            covered.setdefault(rec.graph_instance, set()).add(rec.node_id)
    if not covered:
        return None
    return max(covered, key=lambda h: (len(covered[h]), -counts[h], -h))


def profile_built_in(ctx: RunContext, ref: str, workload: NativeWorkload, sizes: Sequence[int],
                     replays: int, *, mode: str = "global",
                     capacity_of: Callable[[int], int] = class_of) -> list[ProfiledClass]:
    """Profile a graphcert workload (`workload`: its loaded NativeWorkload) at each size, its
    graph captured per class as verify and bench capture it."""
    from graphcert.run.session import WorkloadSession

    session = WorkloadSession(ctx, ref, workload)
    out: list[ProfiledClass] = []
    with Stream() as stream:
        try:
            for n in sizes:
                capacity = capacity_of(n)
                session.prepare(capacity)
                built = session.build(stream, n, mode)
                try:
                    meta = {"workload": ref, "name": session.name, "capacity": capacity, "n": n,
                            "mode": mode}
                    read = read_graph(built.graph, meta)
                    out.append(trace(read, partial(built.exe.launch, stream), stream, replays,
                                     label=f"c{capacity}", size=n))
                finally:
                    built.destroy()
        finally:
            session.release()
    return out


def profile_step(step: Step, ref: str, sizes: Sequence[int], replays: int, *,
                 device: int = 0,
                 capacity_of: Callable[[int], int] = class_of) -> list[ProfiledClass]:
    """Profile a framework step at the bucket of each size: captured by its framework as
    verify captures it, replayed with the framework's own launch on its stream."""
    from graphcert.run.steps import StepVerifier, open_adapter

    adapter = open_adapter(step, device)
    verifier = StepVerifier(step, ref, adapter, 2, 0)
    out: list[ProfiledClass] = []
    for n in sizes:
        capacity = capacity_of(n)
        captured, _static = verifier.capture(capacity)
        try:
            stream = Stream.borrow(adapter.stream_address())
            meta = {"workload": ref, "name": step.name, "capacity": capacity, "n": n,
                    "mode": f"{step.framework} capture"}
            out.append(profile_captured(_graph_object(captured), captured.launch, stream,
                                        replays, label=f"b{capacity}", size=n, meta=meta,
                                        device=device))
        finally:
            captured.release()
    return out


def _graph_object(captured: Captured) -> object:
    """The object graphcert.sources reads a framework's captured graph from (cuda.core's
    builder, PyTorch's CUDAGraph, CuPy's Graph)."""
    # The Captured protocol declares neither: each adapter's own type holds one of them.
    builder = getattr(captured, "builder", None)
    return builder if builder is not None else getattr(captured, "graph")  # noqa: B009


def profile_captured(obj: object, launch: Callable[[], None], stream: Stream, replays: int, *,
                     label: str, size: int, meta: dict[str, object] | None = None,
                     device: int | None = None) -> ProfiledClass:
    """Profile a graph someone else owns (anything graphcert.snapshot takes), replayed by
    `launch` on `stream`, in the context its framework left current."""
    from graphcert.cuda.handles import current_context, graph_from_address
    from graphcert.sources.detect import graph_ref

    ref = graph_ref(obj)
    with current_context(ref.device if device is None else device):
        read = read_graph(GraphRef(graph_from_address(ref.address)), meta)
        return trace(read, launch, stream, replays, label=label, size=size)


def profile_object(obj: object, replay: Callable[[], object], replays: int = DEFAULT_REPLAYS, *,
                   stream: object = None, label: str = "graph") -> ProfileResult:
    """graphcert.profile(...): the profile of a graph the caller holds, replayed by
    `replay()` (e.g. a torch CUDAGraph's g.replay). `stream`: the CUstream the replay runs on
    (an address, or an object with __cuda_stream__); None: the legacy default stream, whose
    events wait for the work of every blocking stream."""
    check_replays(replays)
    if not callable(replay):
        raise InputError(f"replay={replay!r} is not callable",
                         hint="pass the function that replays the graph once, e.g. g.replay")
    t0 = time.perf_counter()
    cls = profile_captured(obj, lambda: _call(replay), Stream.borrow(_stream_address(stream)),
                           replays, label=label, size=0, meta={"name": label})
    return ProfileResult(label, replays, (cls,), cupti_version(),
                         wall_s=time.perf_counter() - t0)


def _call(replay: Callable[[], object]) -> None:
    replay()


def _stream_address(stream: object) -> int:
    if stream is None:
        return 0
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    if hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        return int(stream.cuda_stream)
    if isinstance(stream, int) and not isinstance(stream, bool) and stream >= 0:
        return stream
    raise InputError(f"stream={stream!r} is not a CUDA stream",
                     hint="pass the CUstream address, a torch.cuda.Stream or an object with "
                          "__cuda_stream__, or leave it out for the legacy default stream")


def profile_ref(ctx: RunContext | None, one: Runnable, sizes: Sequence[int], replays: int, *,
                device: int = 0) -> ProfileResult:
    """One workload's profile over `sizes` (a built-in or user workload in `ctx`, a framework
    step in its framework's context): each size captured at its bucket where `sizes` is a
    bucket list, else where the subject captures a size of its own (`unbucketed`)."""
    from graphcert.buckets import Buckets

    t0 = time.perf_counter()
    capacity_of = sizes.capacity_of if isinstance(sizes, Buckets) else one.unbucketed
    classes = one.profile(ctx, sizes, replays, capacity_of=capacity_of, device=device)
    return ProfileResult(one.ref, replays, tuple(classes), cupti_version(),
                         wall_s=time.perf_counter() - t0)


@dataclass(frozen=True)
class ProfiledRun:
    """One workload's profile and the certificate written for it (None: not written)."""

    ref: str
    result: ProfileResult
    certificate: Path | None = None


def default_sizes(loaded: LoadedWorkload) -> Sequence[int]:
    """What a workload is profiled at when no size is given: a framework step at its usual
    buckets (STEP_BUCKETS, each captured at its bucket), anything else at DEFAULT_SIZE."""
    from graphcert.run.runnable import runnable

    return runnable(loaded).profile_sizes()


def profile_workloads(refs: Sequence[str], sizes: Sequence[int] | None, replays: int, *,
                      device: int = 0, out_dir: Path | None = None, options: Options,
                      on_result: Callable[[ProfiledRun], None] | None = None
                      ) -> list[ProfiledRun]:
    """`graphcert profile`'s one call: load every workload (bad references and replays fail
    before GPU work), profile each over `sizes` (None: each at its `default_sizes`), and with
    `out_dir` write a profile certificate per workload."""
    from graphcert.fileio import ensure_writable_dir
    from graphcert.run import environment
    from graphcert.run.runnable import runnable
    from graphcert.run.session import context_for
    from graphcert.workloads.registry import load

    check_replays(replays)
    subjects = [runnable(load(ref)) for ref in refs]
    if out_dir is not None:
        ensure_writable_dir(out_dir)
    load_cupti()
    done: list[ProfiledRun] = []
    with context_for(subjects, device) as ctx:
        env = environment.environment(device, options.git) if out_dir is not None else {}
        for one in subjects:
            result = profile_ref(ctx, one, one.profile_sizes() if sizes is None else sizes,
                                 replays, device=device)
            path = None
            if out_dir is not None:
                path = environment.write(result, out_dir,
                                         environment.subject(one.loaded, "profile"),
                                         env, key=options.signing_key,
                                         uuid_names=options.uuid_names)
            run = ProfiledRun(one.ref, result, path)
            if on_result is not None:
                on_result(run)
            done.append(run)
    return done


__all__ = ["DEFAULT_REPLAYS", "DEFAULT_SIZE", "STEP_BUCKETS", "ProfiledRun", "ReadGraph",
           "check_replays", "default_sizes", "instance_of", "profile_built_in",
           "profile_captured", "profile_object", "profile_ref", "profile_step",
           "profile_workloads", "read_graph", "time_replays", "trace"]
