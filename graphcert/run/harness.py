"""The timing machinery bench uses on one stream: blocking kernel, events, L2 flush buffer,
clock reading, and the sampling loops of each quantity (cold) and of the hot batch figure.
Runs on a GPU. Method after nvbench: sample until the stopping rule holds (graphcert.stats:
the precision of the median each loop reports, or nvbench's noise rule) or a timeout.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from graphcert.cert.results.figures import Ended, Unavailable, WayTimings
from graphcert.cuda.context import RunContext
from graphcert.cuda.memory import DeviceBuffer
from graphcert.cuda.stream import BlockingKernel, Event, Stream
from graphcert.placements import Sampled
from graphcert.run.benchsettings import BenchSettings
from graphcert.stats import Stopper

Enqueue = Callable[[Stream], None]
# Launches on a second stream that move the context into its several-streams state (below).
SETTLE_LAUNCHES = 2000
# The hot figure queues at most this many launches of one path behind one blocking kernel.
HOT_MAX_BATCH = 100
# Set on a RunContext to the generation it was settled in (the several-streams state never
# goes back, but a renewed context starts fresh).
SETTLED_FLAG = "_graphcert_settled"


@dataclass(frozen=True)
class HeldSample:
    """One held launch (Harness.held_sample): seconds between its events on the device, and
    the host's seconds in the launch call."""

    device_s: float
    host_s: float


class QueueUnavailable(Exception):
    """The blocking kernel timed out: the queued (device) figure cannot be trusted."""


class Harness:
    """Timing machinery on one stream: blocker, events, L2 flush buffer, clock reading."""

    def __init__(self, ctx: RunContext, settings: BenchSettings,
                 stream: Stream | None = None):
        """`stream`: time on this stream (a framework's, borrowed: StreamRef) instead of a
        new one of graphcert's."""
        self.ctx = ctx
        self.settings = settings
        self._borrowed = stream
        self._open()

    def _open(self) -> None:
        ctx, settings = self.ctx, self.settings
        self._events: list[Event] = []
        self._flush: DeviceBuffer | None = None
        self._bank: float | None = None  # seconds the loops of measure_samples share
        self.settled_launches = 0
        self.share_loops(settings.placements)
        try:
            self.stream = self._borrowed if self._borrowed is not None else Stream()
            blocker = ctx.kernel("graphcert_runtime.cu", "gc_block_until_released")
            self.blocker = BlockingKernel(blocker, settings.blocker_timeout_s)
            self._calibrate = ctx.kernel("graphcert_runtime.cu", "gc_clock_calibrate")
            self.empty_kernel = ctx.kernel("graphcert_runtime.cu", "gc_empty")
            # Owned here, not by the context: the context frees its buffers after every class.
            self._clock_out = DeviceBuffer(16)
            flush_bytes = 2 * max(ctx.device.info.l2_bytes, 1 << 20)
            self._flush = DeviceBuffer(flush_bytes) if settings.flush_l2 else None
            if settings.settle:
                # The state switches for good: settle once per context, not per workload.
                if getattr(ctx, SETTLED_FLAG, None) != ctx.generation:
                    self._settle_context()
                    setattr(ctx, SETTLED_FLAG, ctx.generation)
                self.settled_launches = SETTLE_LAUNCHES
        except BaseException:
            with contextlib.suppress(Exception):  # the first error is the one to report
                self.close()
            raise

    def renew_context(self) -> str | None:
        """Close, move the run to a new primary context (RunContext.renew: the caller has
        freed the workload's buffers and graphs), and open again there, settled as before.
        None when renewed, else the reason the same context was kept."""
        self.close()
        reason = self.ctx.renew()
        self._open()
        return reason

    def _settle_context(self) -> None:
        """Put the context in the state every real application is in before timing anything.

        The driver (seen on an H200, driver 580) runs launches measurably faster while a
        context has only ever had work on one stream: graph nodes 0.66-0.76 against 1.00-1.10
        µs, stream launches about 8% faster. Enough work on any second stream switches it
        for good, for every stream (benchmarks/NOTES.md). A workload's own streams, a library,
        or nvbench's own stream would switch it mid-run; switching it first makes every figure
        come from the same state, whatever ran before. `--context fresh` skips this in a
        child process to time the other state.
        """
        empty = self.empty_kernel.prepare(1, 1)
        with Stream() as other:
            for _ in range(SETTLE_LAUNCHES):
                empty.enqueue(other)
            other.synchronize()

    def share_loops(self, loops: int) -> None:
        """Each figure is made of `loops` sampling loops (its placements): each loop gets
        its share of the figure's minimum time and timeout (StopRule.shared)."""
        self.loop_rule = self.settings.rule.shared(loops)

    def _flush_l2(self) -> None:
        if self._flush is not None:
            self._flush.memset_u32_async(0, self._flush.nbytes // 4, self.stream)

    def _event_pairs(self, count: int) -> list[tuple[Event, Event]]:
        while len(self._events) < 2 * count:
            self._events.append(Event())
        return [(self._events[2 * i], self._events[2 * i + 1]) for i in range(count)]

    def _collect(self, one_round: Callable[[], list[float]], host_clock: bool) -> Sampled:
        """Sample until the stop rule (this loop's share of it) ends it; the samples and
        how sampling ended. `host_clock`: the samples are read with the host's clock.

        Inside measure_samples the loops share their time (`_bank`): a loop that meets its
        target before its timeout leaves the rest, and a loop at its timeout short of its
        target goes on with what the loops before it left, up to its own timeout again. So
        the figures of one way of launching never take longer together than each one's
        timeout, and the time the quick ones do not need goes to those that need it."""
        samples: list[float] = []
        rule = self.loop_rule
        stopper = Stopper(rule, host_clock)
        t0 = time.perf_counter()
        while (ended := stopper.ended(samples, time.perf_counter() - t0)) is None:
            samples.extend(one_round())
        if self._bank is not None:
            spent = time.perf_counter() - t0
            if ended == Ended.TIMEOUT.value and self._bank > 0:
                extra = min(self._bank, rule.timeout_s)
                longer = Stopper(replace(rule, timeout_s=rule.timeout_s + extra), host_clock)
                while (ended := longer.ended(samples, time.perf_counter() - t0)) is None:
                    samples.extend(one_round())
                self._bank -= min(extra, max(0.0, time.perf_counter() - t0 - spent))
            elif ended != Ended.TIMEOUT.value:
                self._bank += max(0.0, rule.timeout_s - spent)
        return Sampled(samples, Ended(ended),
                       rule.target(host_clock) if rule.stopping == "precision" else None)

    def host_samples(self, enqueue: Enqueue, ops: int) -> Sampled:
        """CPU clock around the launch calls only; the GPU drains between samples."""
        return self._host_rounds((enqueue,), ops)[0]

    def host_against(self, enqueue: Enqueue, reference: Enqueue, ops: int
                     ) -> tuple[Sampled, Sampled]:
        """host_samples of `enqueue` and of `reference` (a bare loop of as many launches),
        one batch of each per round, so whatever drifts during a run (a virtual machine's
        host, the CPU clock) moves both alike: a bare loop timed once at the end of the run
        read 1.03x to 1.33x apart from the stream path on the same machines."""
        ours, bare = self._host_rounds((enqueue, reference), ops)
        return ours, bare

    def _host_rounds(self, enqueues: Sequence[Enqueue], ops: int) -> list[Sampled]:
        """Each round times k back-to-back calls of every enqueue in turn (k from the first,
        so a sample spans >= 50 µs and queues at most max_queued_ops ops); the stop rule
        reads the first one's samples."""
        s = self.stream
        s.synchronize()
        t0 = time.perf_counter()
        enqueues[0](s)
        one = max(time.perf_counter() - t0, 1e-7)
        s.synchronize()
        k = int(min(max(1, math.ceil(50e-6 / one)), max(1, self.settings.max_queued_ops // ops)))
        rows: list[list[float]] = [[] for _ in enqueues]

        def one_round() -> list[float]:
            for enqueue, row in zip(enqueues, rows, strict=True):
                self._flush_l2()
                s.synchronize()
                t0 = time.perf_counter()
                for _ in range(k):
                    enqueue(s)
                t1 = time.perf_counter()
                s.synchronize()
                row.append((t1 - t0) / k)
            return [rows[0][-1]]

        first = self._collect(one_round, host_clock=True)
        return [first, *(Sampled(row, first.ended, first.target) for row in rows[1:])]

    def _held(self, s: Stream, start: Event, end: Event, body: Callable[[], None],
              queued: int) -> float:
        """(event, body, event) queued behind the blocking kernel, released; seconds between
        the events. Raises QueueUnavailable if the blocker timed out."""
        with self.blocker.holding(s):
            start.record(s)
            body()
            end.record(s)
        if self.blocker.outcome() != BlockingKernel.RELEASED:
            raise QueueUnavailable(
                f"the blocking kernel timed out after {self.settings.blocker_timeout_s} s "
                f"with {queued} operations queued behind it (the launch queue was full, "
                f"the host was too slow, or a launch waited on the device: a call that "
                f"synchronises, or a graph whose next launch waits for its previous one); "
                f"the queued figure is unavailable")
        return start.elapsed_s(end)

    def held_sample(self, enqueue: Enqueue, ops: int) -> HeldSample:
        """One sample of graphcert's device time of a launch, the one definition bench's
        cold device figure and profile share: (event, enqueue, event) queued behind its own
        blocking kernel, then released, L2 cleared before where the settings flush it; the
        seconds between the events and the host's seconds in the enqueue call. Queued behind
        the blocker, the device never waits for the host, so a slow launch call (one CUPTI
        traces, say) stays out of the device figure. A blocker timeout (a full launch
        queue) raises QueueUnavailable."""
        s = self.stream
        ((start, end),) = self._event_pairs(1)
        self._flush_l2()
        host: list[float] = []

        def body() -> None:
            t0 = time.perf_counter()
            enqueue(s)
            host.append(time.perf_counter() - t0)

        device = self._held(s, start, end, body, ops + 2)
        return HeldSample(device, host[0])

    def held_samples(self, enqueue: Enqueue, ops: int, count: int) -> list[HeldSample]:
        """`count` held_sample()s in a row (a fixed number, no stopping rule)."""
        return [self.held_sample(enqueue, ops) for _ in range(count)]

    def device_samples(self, enqueue: Enqueue, ops: int) -> Sampled:
        """GPU time alone, nvbench's cold measurement: held_sample()s until the stop rule
        ends them. One sample per hold: batching samples behind one hold lets each sequence
        overlap the previous one's tail and reads up to a third low against nvbench."""
        def one_round() -> list[float]:
            return [self.held_sample(enqueue, ops).device_s]

        return self._collect(one_round, host_clock=False)

    def hot_samples(self, enqueue: Enqueue, ops: int, weight: int | None = None
                    ) -> tuple[Sampled, int]:
        """GPU time per launch with launches back to back and L2 warm, nvbench's batch
        (hot) measurement: a batch of launches between two events behind one blocking
        kernel, no L2 clearing; (samples per launch, batch size). `weight`: what one launch
        costs in queued work (a graph's node count), by default `ops`."""
        s = self.stream
        ((start, end),) = self._event_pairs(1)
        batch = self.hot_batch(weight if weight is not None else ops)
        enqueue(s)  # warm L2 and the launch path
        s.synchronize()

        def body() -> None:
            for _ in range(batch):
                enqueue(s)

        def one_round() -> list[float]:
            return [self._held(s, start, end, body, batch * ops + 2) / batch]

        return self._collect(one_round, host_clock=False), batch

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

        return self._collect(one_round, host_clock=True)

    def measure_samples(self, enqueue: Enqueue, ops: int, weight: int | None = None,
                        bare: Enqueue | None = None,
                        known: Mapping[str, Unavailable] | None = None
                        ) -> dict[str, Sampled | Unavailable]:
        """The three cold quantities of one way of launching, raw (device may be
        Unavailable), with settings.hot the hot device figure as `hot_device` (its batch
        sized by `weight`, see hot_samples), and with `bare` (a bare loop of as many
        launches) its host samples as `bare_host`, taken alternately with host_enqueue's.
        `known`: queued figures already found unavailable for this way of launching (its
        call waits on the host, so the blocking kernel times out): given as they are, not
        held to the blocker's timeout again.

        The figures share their time (see _collect): the device-clock ones, which mostly
        meet their target early, go first, so the host-clock ones, whose jitter is the host's,
        can use what they leave."""
        self._bank = 0.0
        try:
            return self._measure_samples(enqueue, ops, weight, bare, known)
        finally:
            self._bank = None

    def _measure_samples(self, enqueue: Enqueue, ops: int, weight: int | None,
                         bare: Enqueue | None, known: Mapping[str, Unavailable] | None
                         ) -> dict[str, Sampled | Unavailable]:
        out: dict[str, Sampled | Unavailable] = {}
        self._queued_samples(out, enqueue, ops, weight, known)
        if bare is None:
            out["host_enqueue"] = self.host_samples(enqueue, ops)
        else:
            out["host_enqueue"], out["bare_host"] = self.host_against(enqueue, bare, ops)
        out["end_to_end"] = self.end_to_end_samples(enqueue, ops)
        return out

    def _queued_samples(self, out: dict[str, Sampled | Unavailable], enqueue: Enqueue,
                        ops: int, weight: int | None,
                        known: Mapping[str, Unavailable] | None) -> None:
        """measure_samples' device and hot figures, into `out`."""
        takes: tuple[tuple[str, Callable[[], Sampled]], ...] = (
            ("device", lambda: self.device_samples(enqueue, ops)),
            ("hot_device", lambda: self.hot_samples(enqueue, ops, weight)[0]))
        for key, take in takes:
            if key == "hot_device" and not self.settings.hot:
                continue
            if known and key in known:
                out[key] = known[key]
                continue
            try:
                out[key] = take()
            except QueueUnavailable as exc:
                out[key] = Unavailable(str(exc))
                self.stream.synchronize()

    def hot_batch(self, weight: int) -> int:
        """The batch hot_samples uses for launches of `weight` queued operations each: at
        most 2 x max_queued_ops behind one hold (1,000 kernels queued behind a blocking
        kernel did not fill the launch queue on an H200; DEVICE_FACTS.md)."""
        return max(1, min(HOT_MAX_BATCH, 2 * self.settings.max_queued_ops // max(weight, 1)))

    def measure(self, enqueue: Enqueue, ops: int) -> tuple[WayTimings, dict[str, list[float]]]:
        """The three cold quantities for one way of launching at one placement (device may
        be Unavailable), and the raw samples (scripts under benchmarks/ use this)."""
        got = self.measure_samples(enqueue, ops)
        host, e2e, dev = got["host_enqueue"], got["end_to_end"], got["device"]
        assert isinstance(host, Sampled) and isinstance(e2e, Sampled)
        raw = {"host_enqueue": host.samples, "end_to_end": e2e.samples}
        if isinstance(dev, Sampled):
            raw["device"] = dev.samples
        return WayTimings(host.timing(), dev.timing() if isinstance(dev, Sampled) else dev,
                          e2e.timing()), raw

    def clock_mhz(self) -> float:
        """The effective SM clock: cycles counted by clock64() over %globaltimer ns; NaN
        where no time passed (the timer did not read): callers must not compare it."""
        self._calibrate.launch(self.stream, 1, 1, np.uint64(20_000_000), self._clock_out)
        self.stream.synchronize()
        cycles, ns = (int(v) for v in self._clock_out.download(np.uint64, 2))
        return cycles / ns * 1e3 if ns else float("nan")

    def close(self) -> None:
        """Free what was made; also after an __init__ that failed part way (members it never
        set are absent), and again (each member is taken off as it is freed)."""
        made = vars(self)
        stream: Stream | None = made.pop("stream", None)
        if stream is not None:
            stream.synchronize()
        for e in self._events:
            e.destroy()
        self._events = []
        blocker: BlockingKernel | None = made.pop("blocker", None)
        if blocker is not None:
            blocker.free()
        for buf in (made.pop("_clock_out", None), self._flush):
            if buf is not None:
                buf.free()
        self._flush = None
        if stream is not None:
            stream.destroy()


__all__ = ["HOT_MAX_BATCH", "SETTLED_FLAG", "SETTLE_LAUNCHES", "BenchSettings", "Enqueue",
           "Harness", "HeldSample", "QueueUnavailable"]
