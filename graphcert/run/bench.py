"""`bench`: the same kernel sequence launched two ways, stream (record() replayed eagerly with
arguments packed once) and graph (one launch of the instantiated exec), each timed three ways
that are never mixed: host enqueue, device time queued behind a blocking kernel, end to end.
Runs on a GPU. Method after nvbench: sample until the noise rule holds or a timeout.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcert.cert.results import (
    QUANTITIES,
    SIDES,
    BenchResult,
    Ended,
    Interval,
    LineFit,
    SizeResult,
    SweepFit,
    Timing,
    Unavailable,
    Upfront,
    WayTimings,
)
from graphcert.classes import Buckets, class_of
from graphcert.cuda import oplog
from graphcert.cuda.context import RunContext
from graphcert.cuda.graph import GraphExec, graph_size, kernel_node_arguments
from graphcert.cuda.memory import DeviceBuffer
from graphcert.cuda.module import PackedArgs, time_bare_launches
from graphcert.cuda.stream import BlockingKernel, Event, Stream
from graphcert.run.session import Built, WorkloadSession
from graphcert.stats import QUANTUM_S, StopRule, fit_line, speedup_interval, summarize

Enqueue = Callable[[Stream], None]
# Launches on a second stream that move the context into its several-streams state (below).
SETTLE_LAUNCHES = 2000


@dataclass(frozen=True)
class BenchSettings:
    rule: StopRule = field(default_factory=StopRule)
    flush_l2: bool = True  # nvbench's default; see the --flush-l2 option
    blocker_timeout_s: float = 5.0
    max_queued_ops: int = 256  # host loops enqueue at most this many ops between syncs


@dataclass(frozen=True)
class Sampled:
    """One quantity's raw samples and how its sampling loop ended."""

    samples: list[float]
    ended: Ended

    def timing(self) -> Timing:
        return Timing(**summarize(self.samples), ended=self.ended)


class QueueUnavailable(Exception):
    """The blocking kernel timed out: the queued (device) figure cannot be trusted."""


class Harness:
    """Timing machinery on one stream: blocker, events, L2 flush buffer, clock reading."""

    def __init__(self, ctx: RunContext, settings: BenchSettings):
        self.ctx = ctx
        self.settings = settings
        self.stream = Stream()
        blocker = ctx.kernel("graphcert_runtime.cu", "gc_block_until_released")
        self.blocker = BlockingKernel(blocker, settings.blocker_timeout_s)
        self._calibrate = ctx.kernel("graphcert_runtime.cu", "gc_clock_calibrate")
        # Owned here, not by the context: the context frees its buffers after every class.
        self._clock_out = DeviceBuffer(16)
        flush_bytes = 2 * max(ctx.device.info.l2_bytes, 1 << 20)
        self._flush = DeviceBuffer(flush_bytes) if settings.flush_l2 else None
        self._events: list[Event] = []
        self._settle_context()

    def _settle_context(self) -> None:
        """Put the context in the state every real application is in before timing anything.

        The driver (seen on an H200, driver 580) runs launches measurably faster while a
        context has only ever had work on one stream: graph nodes 0.66-0.76 against 1.00-1.10
        µs, stream launches about 8% faster. Enough work on any second stream switches it
        for good, for every stream (benchmarks/NOTES.md). A workload's own streams, a library,
        or nvbench's own stream would switch it mid-run; switching it first makes every figure
        come from the same state, whatever ran before.
        """
        empty = self.ctx.kernel("graphcert_runtime.cu", "gc_empty").prepare(1, 1)
        with Stream() as other:
            for _ in range(SETTLE_LAUNCHES):
                empty.enqueue(other)
            other.synchronize()

    def _flush_l2(self) -> None:
        if self._flush is not None:
            self._flush.memset_u32_async(0, self._flush.nbytes // 4, self.stream)

    def _event_pairs(self, count: int) -> list[tuple[Event, Event]]:
        while len(self._events) < 2 * count:
            self._events.append(Event())
        return [(self._events[2 * i], self._events[2 * i + 1]) for i in range(count)]

    def _collect(self, one_round: Callable[[], list[float]]) -> Sampled:
        """Sample until the stop rule ends it; the samples and how sampling ended."""
        samples: list[float] = []
        t0 = time.perf_counter()
        while (ended := self.settings.rule.ended(samples, time.perf_counter() - t0)) is None:
            samples.extend(one_round())
        return Sampled(samples, Ended(ended))

    def host_samples(self, enqueue: Enqueue, ops: int) -> Sampled:
        """CPU clock around the launch calls only; the GPU drains between samples."""
        s = self.stream
        s.synchronize()
        t0 = time.perf_counter()
        enqueue(s)
        one = max(time.perf_counter() - t0, 1e-7)
        s.synchronize()
        k = int(min(max(1, math.ceil(50e-6 / one)), max(1, self.settings.max_queued_ops // ops)))

        def one_round() -> list[float]:
            self._flush_l2()
            s.synchronize()
            t0 = time.perf_counter()
            for _ in range(k):
                enqueue(s)
            t1 = time.perf_counter()
            s.synchronize()
            return [(t1 - t0) / k]

        return self._collect(one_round)

    def device_samples(self, enqueue: Enqueue, ops: int) -> Sampled:
        """GPU time alone, nvbench's cold measurement: each sample is (event, sequence,
        event) queued behind its own blocking kernel, then released. One sample per hold:
        batching samples behind one hold lets each sequence overlap the previous one's tail
        and reads up to a third low against nvbench. A blocker timeout (a full launch queue)
        raises QueueUnavailable."""
        s = self.stream
        ((start, end),) = self._event_pairs(1)

        def one_round() -> list[float]:
            self._flush_l2()
            with self.blocker.holding(s):
                start.record(s)
                enqueue(s)
                end.record(s)
            if self.blocker.outcome() != BlockingKernel.RELEASED:
                raise QueueUnavailable(
                    f"the blocking kernel timed out after {self.settings.blocker_timeout_s} s "
                    f"with {ops + 2} operations queued behind it (the launch queue was full "
                    f"or the host was too slow); the queued figure is unavailable")
            return [start.elapsed_s(end)]

        return self._collect(one_round)

    def end_to_end_samples(self, enqueue: Enqueue, ops: int) -> Sampled:
        """A host-bound loop: m iterations enqueued back to back, then one synchronise."""
        s = self.stream
        s.synchronize()
        t0 = time.perf_counter()
        enqueue(s)
        s.synchronize()
        one = max(time.perf_counter() - t0, 1e-7)
        m = int(min(max(1, math.ceil(200e-6 / one)), max(1, 4 * self.settings.max_queued_ops
                                                             // ops)))

        def one_round() -> list[float]:
            self._flush_l2()
            s.synchronize()
            t0 = time.perf_counter()
            for _ in range(m):
                enqueue(s)
            s.synchronize()
            return [(time.perf_counter() - t0) / m]

        return self._collect(one_round)

    def measure(self, enqueue: Enqueue, ops: int) -> tuple[WayTimings, dict[str, list[float]]]:
        """The three quantities for one way of launching (device may be Unavailable), and
        the raw samples for the speedup intervals."""
        host = self.host_samples(enqueue, ops)
        e2e = self.end_to_end_samples(enqueue, ops)
        raw = {"host_enqueue": host.samples, "end_to_end": e2e.samples}
        device: Timing | Unavailable
        try:
            dev = self.device_samples(enqueue, ops)
        except QueueUnavailable as exc:
            device = Unavailable(str(exc))
            self.stream.synchronize()
        else:
            device, raw["device"] = dev.timing(), dev.samples
        return WayTimings(host.timing(), device, e2e.timing()), raw

    def clock_mhz(self) -> float:
        """The effective SM clock: cycles counted by clock64() over %globaltimer ns."""
        self._calibrate.launch(self.stream, 1, 1, np.uint64(20_000_000), self._clock_out)
        self.stream.synchronize()
        cycles, ns = (int(v) for v in self._clock_out.download(np.uint64, 2))
        return cycles / ns * 1e3 if ns else float("nan")

    def close(self) -> None:
        self.stream.synchronize()
        for e in self._events:
            e.destroy()
        self.blocker.free()
        self._clock_out.free()
        if self._flush is not None:
            self._flush.free()
        self.stream.destroy()


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


def bench_size(session: WorkloadSession, h: Harness, n: int, capacity: int | None = None
               ) -> SizeResult:
    """Everything measured for one workload at one size (set up at `capacity`, by default
    n's power-of-two class)."""
    capacity = class_of(n) if capacity is None else capacity
    session.prepare(capacity)
    s = h.stream
    clock_before = h.clock_mhz()
    built, upfront = _upfront(session, h, n)
    try:
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
        stream, stream_raw = h.measure(stream_path, op_count)
        graph, graph_raw = h.measure(built.exe.launch, 1)
    finally:
        built.destroy()
    clock_after = h.clock_mhz()
    speedup = {q: (Interval(**speedup_interval(stream_raw[q], graph_raw[q],
                                               quantum_s=QUANTUM_S.get(q, 0.0)))
                   if q in stream_raw and q in graph_raw else None) for q in QUANTITIES}
    gain = stream.end_to_end.median_s - graph.end_to_end.median_s
    return SizeResult(
        n, capacity, stream, graph, speedup, upfront,
        break_even_launches=upfront.setup_s / gain if gain > 0 else None,
        node_count=node_count, throttled=bool(clock_after < 0.95 * clock_before),
        clock_mhz={"before": clock_before, "after": clock_after},
        stream_path="prepacked" if replayable else "record", stream_ops=len(ops),
        stream_host_per_op_s=stream.host_enqueue.median_s / op_count)


def bench(ctx: RunContext, ref: str, sizes: Sequence[int], settings: BenchSettings, *,
          workload: Any = None, on_progress: Callable[..., None] | None = None) -> BenchResult:
    """Bench one workload at each size: the typed result with its verdict.
    `on_progress(units, description)` gets len(QUANTITIES) units per size measured."""
    session = WorkloadSession(ctx, ref, workload)
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
        tuple(rows), {"before_mhz": before, "after_mhz": after},
        {**settings.rule.to_json(), "flush_l2": settings.flush_l2,
         "blocker_timeout_s": settings.blocker_timeout_s,
         "context_settled_launches": SETTLE_LAUNCHES},
        bare, BenchResult.judge(rows))


def fit_sweep(key: str, points: Sequence[tuple[Any, SizeResult]]) -> SweepFit:
    """Per-launch cost as a + b*value for stream and graph, each quantity, from the medians
    of each swept run's first size."""
    xs = [float(value) for value, _ in points]
    fit: dict[str, dict[str, LineFit | None]] = {}
    for way in SIDES:
        fit[way] = {}
        for q in QUANTITIES:
            ys = [r.way(way).get(q) for _, r in points]
            fit[way][q] = (LineFit(**fit_line(xs, [t.median_s for t in ys if t]))
                           if len(xs) >= 2 and all(ys) else None)
    return SweepFit(key, tuple(v for v, _ in points), fit, tuple(r for _, r in points))
