"""One class of `graphcert profile --span` on the GPU: each replay's device time from CUPTI's
GRAPH_TRACE records alone (one record a launch, no per-node tracing), and what that tracing
distorts on the device clock.

Every replay is timed as graphcert times a replay's device (Harness.held_sample). GRAPH_TRACE
gives records only for executables instantiated while it is on, and CUPTI once enabled may
keep a process's replays slower (DEVICE_FACTS.md), so, on the replay stream:
1. an executable E0 is instantiated from the read graph with CUPTI off, warmed, and replayed
   `replays` times held: the untraced device times;
2. GRAPH_TRACE is enabled (nothing else), E1 is instantiated from the same graph inside that
   window, warmed, and replayed `replays` times held: the traced device times, and one
   GRAPH_TRACE record per replay (those with E1's CUPTI id, the warmup's left out);
3. tracing is disabled and both executables destroyed.
Our own executables, not the framework's launch, so a PyTorch graph is timed as graphcert's
own are. A graph the driver will not instantiate a second time (one with a WHILE node) or a
launch the blocking kernel cannot hold (QueueUnavailable) leaves the class without a span,
with that reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphcert.cuda.graph import GraphExec
from graphcert.cupti.activity import Activity, GraphLaunchRecord
from graphcert.cupti.library import load as load_cupti
from graphcert.cupti.nodes import exec_id
from graphcert.errors import GraphcertError
from graphcert.kinds.profile.result import ProfiledClass
from graphcert.kinds.profile.span import ReplaySpan
from graphcert.run.harness import Harness, HeldSample, QueueUnavailable
from graphcert.run.profile_trace import WARMUP, ProfileSettings, ReadGraph, instantiate_again


def span_class(read: ReadGraph, harness: Harness, settings: ProfileSettings, *, label: str,
               size: int, warmup: int = WARMUP) -> ProfiledClass:
    """One class's replay spans and their distortion (see the module's docstring)."""
    load_cupti()  # CUPTI missing: one line before any replay
    ops, replays = read.snapshot.node_count, settings.replays
    untraced_exe, why = instantiate_again(read)
    if untraced_exe is None:
        return _without(read, label, size, str(why), held=False)
    try:
        untraced = _held(harness, untraced_exe, ops, replays, warmup)
    except QueueUnavailable as exc:
        harness.stream.synchronize()
        return _without(read, label, size, str(exc))
    finally:
        untraced_exe.destroy()
    traced_exe: GraphExec | None = None
    try:
        with Activity(graph_trace=True, kernels=False, copies=False) as activity:
            traced_exe, why = instantiate_again(read)
            if traced_exe is None:
                return _without(read, label, size, str(why), held=False)
            own = _exec_id(traced_exe)
            _warm(harness, traced_exe, warmup)
            activity.flush()
            warm = set(activity.graph_launches)
            traced = harness.held_samples(traced_exe.launch, ops, replays)
            harness.stream.synchronize()
    except QueueUnavailable as exc:
        harness.stream.synchronize()
        return _without(read, label, size, str(exc))
    finally:
        if traced_exe is not None:
            traced_exe.destroy()
    spans = replay_spans(activity.graph_launches, warm, own, replays)
    if not spans:
        return _without(read, label, size, f"no GRAPH_TRACE record of the {replays} traced "
                        f"replays ({activity.dropped} record(s) dropped)", held=False)
    return ProfiledClass(label, size, read.snapshot.topology_hash, None, None,
                         span=ReplaySpan.of(spans, _device_ns(traced), _device_ns(untraced),
                                            replays, activity.dropped))


def replay_spans(records: Sequence[GraphLaunchRecord], warm: set[GraphLaunchRecord],
                 own: int | None, replays: int) -> list[float]:
    """Span (end - start, ns) of each timed replay's GRAPH_TRACE record: those of the
    executable `own` (its CUPTI id; None: any), less the warmup's records `warm`, in launch
    order; at most the last `replays` where late warmup records came in with them."""
    mine = [r for r in records if r not in warm and (own is None or r.graph_id == own)]
    mine.sort(key=lambda r: (r.start_ns, r.correlation_id))
    return [float(r.end_ns - r.start_ns) for r in mine[-replays:]] if replays else []


def _exec_id(exe: GraphExec) -> int | None:
    """E1's CUPTI id; None where this CUPTI cannot say (records are then matched by count)."""
    try:
        return exec_id(int(exe.handle))
    except GraphcertError:
        return None


def _warm(harness: Harness, exe: GraphExec, warmup: int) -> None:
    for _ in range(warmup):
        exe.launch(harness.stream)
    harness.stream.synchronize()


def _held(harness: Harness, exe: GraphExec, ops: int, replays: int,
          warmup: int) -> list[HeldSample]:
    _warm(harness, exe, warmup)
    return harness.held_samples(exe.launch, ops, replays)


def _device_ns(samples: Sequence[HeldSample]) -> list[float]:
    return [s.device_s * 1e9 for s in samples]


def _without(read: ReadGraph, label: str, size: int, reason: str, *,
             held: bool = True) -> ProfiledClass:
    """A class with no span, and why (`held`: the held replays could not be timed)."""
    return ProfiledClass(label, size, read.snapshot.topology_hash, None, None,
                         f"held replays unavailable: {reason}" if held else reason)


__all__ = ["replay_spans", "span_class"]
