"""One class of `graphcert profile` on the GPU: its graph read (snapshot, each canonical node's
CUPTI id and node handle), and the traced replays.

Every replay is timed the one way graphcert times a replay's device (Harness.held_sample,
bench's device figure): CUDA events around one launch queued behind a blocking kernel, L2
cleared before it unless the settings say not, so the device never waits for the host and a
launch call that tracing slows stays out of the device figures. In one process, on the
replay stream: WARMUP replays, `replays` held replays with tracing off, then `replays` with
CUPTI's kernel, memcpy and memset activity on; the traced replays' records are the profile,
the two loops' device times the overhead (with the host's launch-call times apart).
Untraced first within each class (CUPTI, once enabled, may keep hooks in the driver after it
is disabled; a later class runs after the earlier one's tracing, which left no measurable
cost: what-if's untraced baselines read the untraced times again). A
launch that waits on the host holds the blocking kernel to its timeout: the replays are then
timed back to back (`time_replays`) and the overhead is None with that reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from graphcert.cuda.graph import Graph, GraphExec
from graphcert.cuda.snapshot import read_snapshot_indexed
from graphcert.cuda.stream import Event, Stream
from graphcert.cupti.activity import Activity
from graphcert.cupti.library import load as load_cupti
from graphcert.cupti.nodes import node_id
from graphcert.errors import CudaError, InputError
from graphcert.kinds.profile.result import ProfiledClass, ReplayOverhead
from graphcert.kinds.profile.whatif import DEFAULT_BUDGET_S as WHATIF_BUDGET_S
from graphcert.kinds.profile.whatif import DEFAULT_NODES as WHATIF_NODES
from graphcert.kinds.profile.whatif import DEFAULT_PAIRS as WHATIF_PAIRS
from graphcert.model import GraphSnapshot, NodeKind
from graphcert.profiling import ActivityRecord, ProfileGraph, analyse, graph_of, join
from graphcert.run.harness import Harness, HeldSample, QueueUnavailable

DEFAULT_REPLAYS = 200
# the overhead's reason where even untraced launches cannot be held (what-if's would not be)
UNTRACED_UNHELD = "untraced replays could not be held behind the blocking kernel"
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
class ProfileSettings:
    """How `graphcert profile` replays each class: traced replays (and as many untraced),
    L2 cleared before each held replay (bench's default) or not, per node (the default) or
    replay spans alone (`span`: graphcert.run.profile_span)."""

    replays: int = DEFAULT_REPLAYS
    flush_l2: bool = True
    # what-if attribution (graphcert.run.profile_whatif): nodes attributed per class (0: off),
    # (enabled, disabled) pairs of held replays per node, wall seconds per class
    what_if: int = WHATIF_NODES
    what_if_pairs: int = WHATIF_PAIRS
    what_if_budget_s: float = WHATIF_BUDGET_S
    span: bool = False

    def __post_init__(self) -> None:
        check_replays(self.replays)
        for name, hint in (("what_if", "nodes attributed per class, 0 for none"),
                           ("what_if_pairs", "pairs of replays per node, at least 1")):
            value = getattr(self, name)
            least = 1 if name == "what_if_pairs" else 0
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise InputError(f"{name}={value!r} is not a whole number >= {least}",
                                 hint=f"pass {name} as an int ({hint})")
        budget = self.what_if_budget_s
        if (isinstance(budget, bool) or not isinstance(budget, (int, float))
                or not 0 < budget < float("inf")):
            raise InputError(f"what_if_budget_s={budget!r} is not a positive number of seconds",
                             hint=f"pass the wall seconds what-if may take per class, above 0 "
                                  f"(default {WHATIF_BUDGET_S:g})")


@dataclass(frozen=True)
class ReadGraph:
    """A graph read for profiling: its snapshot, the profiled graph (nodes with ids), the
    graph itself and {template node handle as int: canonical index}."""

    snapshot: GraphSnapshot
    graph: ProfileGraph
    source: Graph | None = None
    positions: Mapping[int, int] = field(default_factory=dict)


def read_graph(graph: Graph, meta: dict[str, object] | None = None) -> ReadGraph:
    """The snapshot of `graph` and each canonical node's CUPTI id. A graph with no kernel,
    memcpy or memset node is an InputError (nothing to time)."""
    snapshot, positions = read_snapshot_indexed(graph, meta)
    ids = [0] * snapshot.node_count
    for handle, index in positions.items():
        ids[index] = node_id(handle)
    return ReadGraph(snapshot, graph_of(snapshot, ids), graph, positions)


# Node kinds a graph may hold that can keep the driver from instantiating it a second time
# (a WHILE node's graph gave CUDA_ERROR_NOT_SUPPORTED on an H200 and an H100).
ONE_EXECUTABLE_KINDS = (NodeKind.CONDITIONAL, NodeKind.MEM_ALLOC, NodeKind.MEM_FREE)


def instantiate_again(read: ReadGraph) -> tuple[GraphExec | None, str | None]:
    """An executable of graphcert's own from the graph read (what-if and span mode time one
    beside the caller's), or None and why the driver would not make one."""
    if read.source is None:
        return None, "the graph read has no CUDA graph to instantiate"
    try:
        return read.source.instantiate(), None
    except CudaError as exc:
        kinds = sorted({n.kind.value for n in read.snapshot.nodes
                        if n.kind in ONE_EXECUTABLE_KINDS})
        held = f" (it holds {', '.join(kinds)} nodes)" if kinds else ""
        return None, (f"the driver would not instantiate a second executable of this "
                      f"graph{held}: {exc.call} gave {exc.name}")


def time_replays(launch: Callable[[], None], stream: Stream, count: int) -> list[float]:
    """Device nanoseconds of each of `count` replays enqueued back to back, a CUDA event
    before and after each, read once all are done (the fallback where held launches cannot
    be timed: the host's launch gaps are in these)."""
    if count <= 0:
        return []
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


def held_replays(harness: Harness, launch: Callable[[], None], ops: int, count: int
                 ) -> tuple[list[HeldSample], str | None]:
    """Up to `count` held replays of `launch` (Harness.held_sample), and None; or, where the
    blocking kernel timed out (the launch waited on the device), those timed before it and
    why. The replay that timed out ran all the same."""
    done: list[HeldSample] = []
    for _ in range(count):
        try:
            done.append(harness.held_sample(lambda _stream: launch(), ops))
        except QueueUnavailable as exc:
            harness.stream.synchronize()
            return done, str(exc)
    return done, None


def trace(read: ReadGraph, launch: Callable[[], None], harness: Harness,
          settings: ProfileSettings, *, label: str, size: int,
          warmup: int = WARMUP) -> ProfiledClass:
    """Replay `launch` untraced then traced, held, `settings.replays` times each (see the
    module's docstring) and analyse the traced replays' records. A loop whose launches
    cannot be held is finished back to back, and the overhead is None with the reason."""
    replays, stream = settings.replays, harness.stream
    load_cupti()  # CUPTI missing: one line before any replay
    for _ in range(warmup):
        launch()
    stream.synchronize()
    ops = read.snapshot.node_count
    untraced, reason = held_replays(harness, launch, ops, replays)
    if reason is not None:
        reason = f"{UNTRACED_UNHELD}: {reason}"
    traced: list[HeldSample] = []
    with Activity() as activity:
        if reason is None:
            traced, why = held_replays(harness, launch, ops, replays)
            if why is not None:
                reason = (f"with CUPTI tracing on, the replays could not be held behind the "
                          f"blocking kernel, so they were timed back to back: {why}")
                time_replays(launch, stream, replays - len(traced) - 1)
        else:
            time_replays(launch, stream, replays)
        stream.synchronize()
    records = [r.activity() for r in activity.records if r.in_graph]
    profile = analyse(join(records, read.graph, dropped=activity.dropped,
                           graph_instance=instance_of(records, read.graph)))
    overhead = None if reason is not None else ReplayOverhead.held(
        [s.device_s * 1e9 for s in traced], [s.device_s * 1e9 for s in untraced],
        [s.host_s * 1e9 for s in traced], [s.host_s * 1e9 for s in untraced],
        len(records) / replays)
    return ProfiledClass(label, size, read.snapshot.topology_hash, profile, overhead, reason)


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
