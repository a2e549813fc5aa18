"""`bench` of a framework step: graph replay against the eager call, per bucket.

A documented simpler timing than `run/bench.py`'s harness, which queues graphcert's own
streams behind a blocking kernel: a step runs on its framework's stream, so here each side
is timed with the host clock only, two ways never mixed: host enqueue (the call alone) and
end to end (the call and the wait for the device). The device-only figure is Unavailable
with that reason. Sampling follows the same stopping rule (nvbench's: noise, minimum
samples and time, timeout). Up-front: the framework's capture and instantiate time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from graphcert.buckets import Buckets
from graphcert.cert.results import (
    QUANTITIES,
    BenchResult,
    Ended,
    Interval,
    SizeResult,
    Timing,
    Unavailable,
    Upfront,
    WayTimings,
)
from graphcert.frameworks.adapters import Adapter
from graphcert.frameworks.step import Step
from graphcert.run.steps import StepVerifier, open_adapter
from graphcert.stats import StopRule, speedup_interval, summarize

DEVICE_UNAVAILABLE = ("a framework step runs on its framework's stream, which graphcert does "
                      "not queue behind its blocking kernel: host enqueue and end to end only")
# What the bench schema's step_settings and clock.unavailable_reason carry.
HARNESS_UNAVAILABLE = ("a framework step is timed on its framework's stream with the host "
                       "clock: graphcert's harness (L2 flush, blocking kernel, settled "
                       "launches) is not used")
CLOCK_UNAVAILABLE = ("a framework step runs in its framework's context, where graphcert's SM "
                     "clock kernel is not loaded: the clock was not read")


def _sample(rule: StopRule, one: Callable[[], float]) -> tuple[Timing, list[float]]:
    samples: list[float] = []
    start = time.perf_counter()
    while True:
        samples.append(one())
        ended = rule.ended(samples, time.perf_counter() - start)
        if ended is not None:
            return summarize(samples, Ended(ended)), samples


def _way(rule: StopRule, launch: Callable[[], None], wait: Callable[[], None]
         ) -> tuple[WayTimings, dict[str, list[float]]]:
    def enqueue() -> float:
        t0 = time.perf_counter()
        launch()
        t1 = time.perf_counter()
        wait()
        return t1 - t0

    def end_to_end() -> float:
        t0 = time.perf_counter()
        launch()
        wait()
        return time.perf_counter() - t0

    host, host_raw = _sample(rule, enqueue)
    e2e, e2e_raw = _sample(rule, end_to_end)
    return (WayTimings(host, Unavailable(DEVICE_UNAVAILABLE), e2e),
            {"host_enqueue": host_raw, "end_to_end": e2e_raw})


def bench_step(step: Step, ref: str, sizes: Sequence[int], rule: StopRule, *,
               adapter: Adapter | None = None, device: int = 0,
               on_progress: Callable[..., None] | None = None) -> BenchResult:
    """Time replay and eager call of the step at each size's bucket (its inputs padded), on
    device number `device`."""
    verifier = StepVerifier(step, ref, adapter or open_adapter(step, device), 2, 0)
    a = verifier.adapter
    rows = []
    for n in sizes:
        capacity = sizes.capacity_of(n) if isinstance(sizes, Buckets) else n
        captured, static = verifier.capture(capacity)
        try:
            snap = a.snapshot(captured, f"{step.name}-b{capacity}")
            t0 = time.perf_counter()
            captured.launch()
            a.synchronize()
            first = time.perf_counter() - t0
            eager, eager_raw = _way(rule, partial(a.call, step, static), a.synchronize)
            graph, graph_raw = _way(rule, captured.launch, a.synchronize)
        finally:
            captured.release()
        speedup: dict[str, Interval | None] = {
            q: (speedup_interval(eager_raw[q], graph_raw[q]) if q in eager_raw else None)
            for q in QUANTITIES}
        upfront = Upfront(captured.capture_s, captured.instantiate_s, None, first)
        gain = eager.end_to_end.median_s - graph.end_to_end.median_s
        rows.append(SizeResult(n, capacity, eager, graph, speedup, upfront,
                               upfront.setup_s / gain if gain > 0 else None, snap.node_count,
                               False, None, "eager", None, None))
        if on_progress:
            on_progress(len(QUANTITIES))
    settings: dict[str, Any] = {**rule.to_json(), "framework": step.framework,
                                "timing": "host clock (framework step)", "stream_side": "eager",
                                "harness_unavailable_reason": HARNESS_UNAVAILABLE}
    unread = Unavailable(CLOCK_UNAVAILABLE)
    return BenchResult(tuple(rows), {"before_mhz": None, "after_mhz": None}, settings, None,
                       verdict=BenchResult.judge(rows, clock_unavailable=unread,
                                                 other_context=None),
                       clock_unavailable=unread)
