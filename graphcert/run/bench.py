"""`bench`: the same kernel sequence launched two ways, stream (record() replayed eagerly with
arguments packed once) and graph (one launch of the instantiated exec), each timed three ways
that are never mixed: host enqueue, device time queued behind a blocking kernel, end to end;
cold (L2 cleared, one sample per hold) and hot (back to back, L2 warm) reported apart; every
figure the median over several placements of the workload's buffers, each after the first in
a new primary context (the stream path's device time moves with the context as much as it
does between processes). Runs on a GPU; the timing machinery is in run/harness.py.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from graphcert import telemetry
from graphcert.buckets import Buckets, class_of
from graphcert.cert.results.figures import (
    QUANTITIES,
    SIDES,
    LineFit,
    Timing,
    Unavailable,
    WayTimings,
)
from graphcert.cert.results.measure import (
    Context,
    HotTimings,
    PlacementContexts,
    PlacementSpread,
    Telemetry,
)
from graphcert.cuda import oplog
from graphcert.cuda.context import RunContext
from graphcert.cuda.graph import GraphExec, graph_size, kernel_node_arguments
from graphcert.cuda.memory import DeviceBuffer
from graphcert.cuda.module import PackedArgs, bare_launches, time_bare_launches
from graphcert.cuda.stream import Stream
from graphcert.kinds.bench.result import BenchResult, SizeResult, Upfront
from graphcert.kinds.sweep.result import SweepFit
from graphcert.placements import Sampled, pad_bytes, pooled
from graphcert.run.harness import SETTLE_LAUNCHES, BenchSettings, Harness, QueueUnavailable
from graphcert.run.session import Built, WorkloadSession
from graphcert.stats import QUANTUM_S, fit_line, speedup_interval
from graphcert.workloads.loaded import NativeWorkload

__all__ = ["SETTLE_LAUNCHES", "BenchSettings", "Harness", "QueueUnavailable", "bench",
           "bench_size", "fit_sweep", "throttle_check"]
Measured = dict[str, "Sampled | Unavailable"]

def _upfront(session: WorkloadSession, h: Harness, n: int) -> tuple[Built, Upfront]:
    """Capture, instantiate, upload and first launch of the graph; exec update from a second
    capture; one kernel node's set-params."""
    s = h.stream
    built = session.build(s, n)
    t0 = time.perf_counter()
    built.exe.launch(s)
    s.synchronize()
    first_launch = time.perf_counter() - t0
    again = session.record_graph(s, n)
    try:
        u0 = time.perf_counter()
        result = built.exe.update(again)
        exec_update = time.perf_counter() - u0 if result.ok else None
    finally:
        again.destroy()
    return built, Upfront(built.capture_s, built.instantiate_s, built.upload_s, first_launch,
                          exec_update, _time_set_params(built.exe, built.graph))


def _time_set_params(exe: GraphExec, graph: Any) -> float | None:
    from graphcert.cuda.snapshot import kernel_nodes

    nodes = kernel_nodes(graph)
    if not nodes:
        return None
    params, args = kernel_node_arguments(nodes[0])
    packed = PackedArgs(args)
    params.kernelParams = packed.address
    t0 = time.perf_counter()
    exe.set_kernel_params(nodes[0], params)
    return time.perf_counter() - t0


@dataclass(frozen=True)
class _Placement:
    """What one placement of the workload's buffers gave, raw."""

    stream: Measured
    graph: Measured
    node_count: int
    stream_path: str
    stream_ops: int
    op_count: int
    hot_batch: dict[str, int]


def _measure_placement(session: WorkloadSession, h: Harness, n: int, built: Built,
                       known: Mapping[str, Mapping[str, Unavailable]]) -> _Placement:
    """Both paths at the current placement: the stream path replays the ops record() made
    (their arguments point at this placement's buffers), the graph path this placement's
    exec."""
    s = h.stream
    node_count = graph_size(built.graph.handle)[0]  # the count alone: no canonical order
    with oplog.recording() as ops:
        session.run_eager(s, n)
    s.synchronize()
    op_count = max(len(ops), 1)
    replayable = len(ops) > 0 and len(ops) == node_count
    if replayable:
        def stream_path(st: Stream) -> None:
            for op in ops:
                op(st)
    else:  # work graphcert's wrappers do not see (cuda.core, CuPy, host loops)
        def stream_path(st: Stream) -> None:
            session.run_eager(st, n)
        op_count = max(node_count, 1)
    # The bare loop of as many launches, timed alternately with the stream path's host figure.
    bare = bare_launches(h.empty_kernel, op_count) if replayable else None
    stream = h.measure_samples(stream_path, op_count, bare=bare, known=known.get("stream"))
    graph = h.measure_samples(built.exe.launch, 1, weight=max(node_count, 1),
                              known=known.get("graph"))
    return _Placement(stream, graph, node_count, "prepacked" if replayable else "record",
                      len(ops), op_count, {"stream": h.hot_batch(op_count),
                                           "graph": h.hot_batch(max(node_count, 1))})


def _way(per: Sequence[Measured]) -> tuple[WayTimings, dict[str, PlacementSpread],
                                           dict[str, list[list[float]]],
                                           Timing | Unavailable | None]:
    """One side pooled over placements: the cold timings, each quantity's spread over
    placements, the raw samples of each placement, and the hot figure (None: not
    measured)."""
    figures: dict[str, Timing | Unavailable] = {}
    spreads: dict[str, PlacementSpread] = {}
    raw: dict[str, list[list[float]]] = {}
    for q in (*QUANTITIES, "hot_device"):
        if q not in per[0]:
            continue
        figure, spread, _ = pooled([m[q] for m in per])
        figures[q] = figure
        if spread is not None:
            spreads[q] = spread
            raw[q] = [got.samples for m in per if isinstance(got := m[q], Sampled)]
    host, e2e = figures["host_enqueue"], figures["end_to_end"]
    assert isinstance(host, Timing) and isinstance(e2e, Timing)  # host loops cannot time out
    return WayTimings(host, figures["device"], e2e), spreads, raw, figures.get("hot_device")


def bench_size(session: WorkloadSession, h: Harness, n: int, capacity: int | None = None,
               placements: int | None = None) -> SizeResult:
    """Everything measured for one workload at one size (set up at `capacity`, by default
    n's power-of-two class), over `placements` placements of its buffers (default: the
    settings'): the workload is set up again at each behind a pad allocation of a different
    size (after the first, in a new primary context unless the settings say otherwise or
    something else holds the context: `contexts` says which), and every figure is the median
    over placements. Up-front costs come from the first placement."""
    capacity = class_of(n) if capacity is None else capacity
    count = max(1, h.settings.placements if placements is None else placements)
    h.share_loops(count)
    clock_before = h.clock_mhz()
    runs: list[_Placement] = []
    upfront: Upfront | None = None
    contexts = PlacementContexts(1)
    for k in range(count):
        session.release()
        if k and h.settings.new_contexts and contexts.kept is None:
            contexts = contexts.after_renewal(h.renew_context())
        pad = DeviceBuffer(pad_bytes(k)) if k else None
        try:
            session.prepare(capacity)
            if upfront is None:
                built, upfront = _upfront(session, h, n)
            else:
                built = session.build(h.stream, n)
            try:
                runs.append(_measure_placement(session, h, n, built, unavailable_in(runs)))
            finally:
                built.destroy()
        finally:
            if pad is not None:
                pad.free()
    assert upfront is not None
    throttled, clock = throttle_check(clock_before, h.clock_mhz())
    stream, s_spread, stream_raw, s_hot = _way([r.stream for r in runs])
    graph, g_spread, graph_raw, g_hot = _way([r.graph for r in runs])
    speedup = {q: (speedup_interval(stream_raw[q], graph_raw[q],
                                    quantum_s=QUANTUM_S.get(q, 0.0))
                   if q in stream_raw and q in graph_raw else None) for q in QUANTITIES}
    gain = stream.end_to_end.median_s - graph.end_to_end.median_s
    first = runs[0]
    hot = (HotTimings(s_hot, g_hot, first.hot_batch)
           if s_hot is not None and g_hot is not None else None)
    return SizeResult(
        n, capacity, stream, graph, speedup, upfront,
        break_even_launches=upfront.setup_s / gain if gain > 0 else None,
        node_count=first.node_count, throttled=throttled, clock_mhz=clock,
        stream_path=first.stream_path, stream_ops=first.stream_ops,
        stream_host_per_op_s=stream.host_enqueue.median_s / first.op_count,
        bare_host_per_op_s=_bare_per_op([r.stream for r in runs], first.op_count),
        placements={"stream": s_spread, "graph": g_spread}, hot=hot, contexts=contexts)


def unavailable_in(runs: Sequence[_Placement]) -> dict[str, dict[str, Unavailable]]:
    """Per side, the queued figures an earlier placement found unavailable: a way of
    launching that waits on the host holds the blocking kernel to its timeout at every
    placement, and the pooled figure is unavailable anyway (placements.pooled)."""
    out: dict[str, dict[str, Unavailable]] = {"stream": {}, "graph": {}}
    for run in runs:
        for side, got in (("stream", run.stream), ("graph", run.graph)):
            for key, value in got.items():
                if isinstance(value, Unavailable):
                    out[side].setdefault(key, value)
    return out


def _bare_per_op(per: Sequence[Measured], ops: int) -> float | None:
    """The bare loop's host seconds per launch, median over placements (None: not timed)."""
    medians = [got.timing().median_s for m in per
               if isinstance(got := m.get("bare_host"), Sampled)]
    return float(statistics.median(medians)) / ops if medians else None


def throttle_check(before_mhz: float, after_mhz: float
                   ) -> tuple[bool, dict[str, float] | None]:
    """(throttled, the clock figures) from the SM clock read before and after one size.
    A reading that is not a positive finite number (the timer gave no time) cannot show
    throttling: the figures are None, which `BenchResult.judge` makes incomplete, never a
    pass."""
    if not all(math.isfinite(v) and v > 0 for v in (before_mhz, after_mhz)):
        return False, None
    return after_mhz < 0.95 * before_mhz, {"before": before_mhz, "after": after_mhz}


def _finite(mhz: float) -> float | None:
    return mhz if math.isfinite(mhz) else None


def bench(ctx: RunContext, ref: str, sizes: Sequence[int], settings: BenchSettings, *,
          workload: NativeWorkload | None = None, on_progress: Callable[..., None] | None = None
          ) -> BenchResult:
    """Bench one workload at each size: the typed result with its verdict.
    `on_progress(units, description)` gets len(QUANTITIES) units per size measured."""
    t0 = time.perf_counter()
    session = WorkloadSession(ctx, ref, workload)
    with telemetry.window() as counts:
        result = _bench(session, ctx, sizes, settings, on_progress, ref)
    return replace(result, telemetry=Telemetry(**counts), wall_s=time.perf_counter() - t0)


def _bench(session: WorkloadSession, ctx: RunContext, sizes: Sequence[int],
           settings: BenchSettings, on_progress: Callable[..., None] | None, ref: str
           ) -> BenchResult:
    h = Harness(ctx, settings)
    try:
        before = h.clock_mhz()
        rows = []
        for n in sizes:
            if on_progress:
                on_progress(0, f"bench {ref} n={n:,}")
            # Each bucket of a bucket list is its own capacity (24 stays 24, not 32).
            capacity = sizes.capacity_of(n) if isinstance(sizes, Buckets) else None
            rows.append(bench_size(session, h, n, capacity))
            if on_progress:
                on_progress(len(QUANTITIES))
        session.release()
        after = h.clock_mhz()
        bare_kernel = ctx.kernel("graphcert_runtime.cu", "gc_empty")
        bare = time_bare_launches(bare_kernel, h.stream, 20_000)
    finally:
        h.close()
    return BenchResult(
        tuple(rows), {"before_mhz": _finite(before), "after_mhz": _finite(after)},
        {**settings.rule.to_json(), "flush_l2": settings.flush_l2,
         "blocker_timeout_s": settings.blocker_timeout_s,
         "context_settled_launches": h.settled_launches, "placements": settings.placements,
         "new_contexts": settings.new_contexts, "hot": settings.hot},
        bare, verdict=BenchResult.judge(rows, clock_unavailable=None, other_context=None),
        context=Context.SEVERAL_STREAMS if settings.settle else Context.FRESH)


def fit_sweep(key: str, points: Sequence[tuple[float, SizeResult]]) -> SweepFit:
    """Per-launch cost as a + b*value for stream and graph, each quantity, from the medians
    of each swept run's first size."""
    xs = [float(value) for value, _ in points]
    fit: dict[str, dict[str, LineFit | None]] = {}
    for way in SIDES:
        fit[way] = {}
        for q in QUANTITIES:
            ys = [r.way(way).get(q) for _, r in points]
            fit[way][q] = (fit_line(xs, [t.median_s for t in ys if t])
                           if len(xs) >= 2 and all(ys) else None)
    rows = tuple(r for _, r in points)
    return SweepFit(key, tuple(v for v, _ in points), fit, rows, verdict=SweepFit.judge(rows))
