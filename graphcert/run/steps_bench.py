"""`bench` of a framework step: graph replay against the eager call, per bucket.

The step runs on its framework's stream, so graphcert's harness (run/harness.py) times it
there: the framework's stream is borrowed (a StreamRef) and graphcert's kernels (blocking
kernel, SM clock, empty kernel) are loaded into the device's primary context, which is the
context PyTorch and CuPy work in. Each side is timed as a built-in's is: host enqueue, device
time queued behind the blocking kernel (cold, L2 cleared) and end to end, and the hot figure
(back to back, L2 warm), with the same stopping rule; the SM clock is read before and after
each bucket for the throttle check. One placement: the framework allocates the buffers. The
context is left in whatever state the framework put it in (no settling launches). A step
whose call waits on the host (a synchronize inside it) holds the blocking kernel to its
timeout: its device figures are then Unavailable with that reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Protocol

from graphcert.buckets import Buckets
from graphcert.cert.results.figures import QUANTITIES, Interval, Timing, Unavailable, WayTimings
from graphcert.cert.results.measure import HotTimings
from graphcert.cuda.context import RunContext
from graphcert.cuda.stream import Stream, StreamRef
from graphcert.frameworks.adapters import Adapter
from graphcert.frameworks.step import Step
from graphcert.kinds.bench.result import BenchResult, SizeResult, Upfront
from graphcert.placements import Sampled, pooled
from graphcert.run.bench import throttle_check
from graphcert.run.harness import BenchSettings, Harness
from graphcert.run.steps import StepVerifier, open_adapter
from graphcert.stats import QUANTUM_S, speedup_interval

Measured = dict[str, "Sampled | Unavailable"]


class StepHarness(Protocol):
    """What the step bench uses of run/harness.Harness (the CPU tests pass a fake)."""

    def measure_samples(self, enqueue: Callable[[Stream], None], ops: int,
                        weight: int | None = None, bare: Callable[[Stream], None] | None = None,
                        known: Mapping[str, Unavailable] | None = None) -> Measured: ...

    def hot_batch(self, weight: int) -> int: ...

    def clock_mhz(self) -> float: ...

    def close(self) -> None: ...


def framework_harness(adapter: Adapter, settings: BenchSettings, device: int
                      ) -> tuple[StepHarness, Callable[[], None]]:
    """graphcert's harness on the framework's stream in the device's primary context, and
    what closes it (the harness, then graphcert's hold on the context)."""
    return stream_harness(adapter.stream_address(), settings, device)


def stream_harness(address: int, settings: BenchSettings, device: int
                   ) -> tuple[Harness, Callable[[], None]]:
    """graphcert's harness on a stream someone else owns (its CUstream address) in the
    device's primary context, unsettled, one placement; and what closes it (the harness,
    then graphcert's hold on the context)."""
    ctx = RunContext.open(device)
    try:
        h = Harness(ctx, replace(settings, settle=False, placements=1),
                    stream=StreamRef(address))
    except BaseException:
        ctx.close()
        raise

    def close() -> None:
        try:
            h.close()
        finally:
            ctx.close()

    return h, close


def _figures(got: Measured) -> tuple[WayTimings, Timing | Unavailable | None,
                                     dict[str, list[list[float]]]]:
    """One side's cold timings, its hot figure, and each quantity's raw samples."""
    figures: dict[str, Timing | Unavailable] = {}
    raw: dict[str, list[list[float]]] = {}
    for q, value in got.items():
        figure, _, samples = pooled([value])
        figures[q] = figure
        if isinstance(value, Sampled):
            raw[q] = [samples]
    host, e2e = figures["host_enqueue"], figures["end_to_end"]
    assert isinstance(host, Timing) and isinstance(e2e, Timing)  # host loops cannot time out
    return WayTimings(host, figures["device"], e2e), figures.get("hot_device"), raw


def bench_step(step: Step, ref: str, sizes: Sequence[int], settings: BenchSettings, *,
               adapter: Adapter | None = None, device: int = 0,
               on_progress: Callable[..., None] | None = None,
               open_harness: Callable[[Adapter, BenchSettings, int],
                                      tuple[StepHarness, Callable[[], None]]] | None = None
               ) -> BenchResult:
    """Time replay and eager call of the step at each size's bucket (its inputs padded), on
    device number `device`, with graphcert's harness on the framework's stream
    (`open_harness`, by default framework_harness, opens it and says how to close it)."""
    t0_run = time.perf_counter()
    verifier = StepVerifier(step, ref, adapter or open_adapter(step, device), 2, 0)
    a = verifier.adapter
    verifier.prepare()
    h, close = (open_harness or framework_harness)(a, settings, device)
    rows = []
    try:
        before_run = h.clock_mhz()
        known: dict[str, dict[str, Unavailable]] = {"eager": {}, "graph": {}}
        for n in sizes:
            rows.append(_bench_bucket(verifier, h, n, sizes, known))
            if on_progress:
                on_progress(len(QUANTITIES))
        after_run = h.clock_mhz()
    finally:
        close()
    run_settings = {**settings.rule.to_json(), "flush_l2": settings.flush_l2,
                    "blocker_timeout_s": settings.blocker_timeout_s,
                    "context_settled_launches": 0, "placements": 1, "new_contexts": False,
                    "hot": settings.hot, "framework": step.framework, "stream_side": "eager",
                    "timing": "graphcert's harness on the framework's stream"}
    return BenchResult(tuple(rows), {"before_mhz": _finite(before_run),
                                     "after_mhz": _finite(after_run)}, run_settings, None,
                       verdict=BenchResult.judge(rows, clock_unavailable=None,
                                                 other_context=None),
                       wall_s=time.perf_counter() - t0_run)


def _finite(mhz: float) -> float | None:
    return mhz if mhz == mhz and mhz not in (float("inf"), float("-inf")) else None


def _bench_bucket(verifier: StepVerifier, h: StepHarness, n: int, sizes: Sequence[int],
                  known: dict[str, dict[str, Unavailable]]) -> SizeResult:
    """One bucket; `known` carries, per side, the queued figures an earlier bucket found
    unavailable (the call waits on the host at every bucket: not held to the blocking
    kernel's timeout again) and gains this bucket's."""
    a, step = verifier.adapter, verifier.step
    capacity = sizes.capacity_of(n) if isinstance(sizes, Buckets) else n
    clock_before = h.clock_mhz()
    captured, static = verifier.capture(capacity)
    try:
        snap = a.snapshot(captured, f"{step.name}-b{capacity}")
        nodes = max(snap.node_count, 1)
        t0 = time.perf_counter()
        captured.launch()
        a.synchronize()
        first = time.perf_counter() - t0
        eager_call = partial(a.call, step, static)
        eager = h.measure_samples(lambda _s: eager_call(), nodes, known=known["eager"])
        graph = h.measure_samples(lambda _s: captured.launch(), 1, weight=nodes,
                                  known=known["graph"])
        for side, got in (("eager", eager), ("graph", graph)):
            known[side].update((k, v) for k, v in got.items() if isinstance(v, Unavailable))
    finally:
        captured.release()
    throttled, clock = throttle_check(clock_before, h.clock_mhz())
    (e_way, e_hot, e_raw), (g_way, g_hot, g_raw) = _figures(eager), _figures(graph)
    speedup: dict[str, Interval | None] = {
        q: (speedup_interval(e_raw[q], g_raw[q], quantum_s=QUANTUM_S.get(q, 0.0))
            if q in e_raw and q in g_raw else None) for q in QUANTITIES}
    upfront = Upfront(captured.capture_s, captured.instantiate_s, None, first)
    gain = e_way.end_to_end.median_s - g_way.end_to_end.median_s
    hot = (HotTimings(e_hot, g_hot, {"stream": h.hot_batch(nodes), "graph": h.hot_batch(nodes)})
           if e_hot is not None and g_hot is not None else None)
    return SizeResult(n, capacity, e_way, g_way, speedup, upfront,
                      upfront.setup_s / gain if gain > 0 else None, snap.node_count,
                      throttled, clock, "eager", None, None, hot=hot)
