"""Framework steps per bucket: capture with the framework's own capture at the bucket's size,
then for each sampled n pad the n-row inputs up to the bucket, replay, and compare the rows
that belong to n with the framework's eager result at n. Runs on a GPU (or on a registered
synthetic framework in the CPU tests).

Per bucket: the snapshot (inventory, fingerprints), capture and instantiate time, the
framework's pool bytes and the driver's graph memory, padding waste, replay against eager
time, the graph cache key; across buckets what changes (kernels, grids, topology).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from graphcert.apicheck import as_tuple
from graphcert.buckets import Buckets, padding_waste, sample_sizes
from graphcert.cert.results.capture import CaptureResult
from graphcert.errors import FrameworkMissing, GraphcertError, InputError, first_line
from graphcert.frameworks.adapters import Adapter, Captured, adapter_for
from graphcert.frameworks.compare import RowCompare
from graphcert.frameworks.padding import Fill, PadValueError, recorded, resolve
from graphcert.frameworks.step import Step
from graphcert.kinds.topology.causes import Cause, moved_memory_reason
from graphcert.kinds.topology.result import (
    AnyClass,
    ClassResult,
    SampleResult,
    VerifyResult,
    VerifySettings,
)
from graphcert.kinds.topology.steps import StepBucket, cache_key
from graphcert.model.io import SNAPSHOT_SCHEMA_VERSION
from graphcert.render.dot import snapshot_to_dot
from graphcert.run.step_causes import CauseFinder, MovedMemory, PointerCheck
from graphcert.run.verify import transitions
from graphcert.workloads.registry import parse_ref

T = TypeVar("T")

# Replay and eager launches timed per bucket for the certificate's replay_s / eager_s.
TIMED_LAUNCHES = 5


class StepCaptureError(InputError):
    """The framework refused to capture the step (it allocates or synchronises)."""


# Who each phase's seconds belong to (benchmarks/steps_overhead.py reports them so).
# The framework's and the step's own: the step's make_inputs, the warm-up calls, capture and
# instantiate, replays and the eager reference run, each waited for, and freeing the graph
# and its pool (release).
FRAMEWORK_PHASES = ("inputs", "warmup", "capture", "replay", "eager", "release")
# graphcert's, per bucket: filling the static buffers and padding, reading the graph
# (snapshot, fingerprints), the pool's and the driver's memory figures, keeping the eager
# rows of n and comparing them with the graph's (on the device where the adapter can).
OWN_PHASES = ("pad", "snapshot", "memory", "compare")
# graphcert's, once per run before the first bucket: the reader's imports and driver set-up,
# and the first memory reads' one-time costs.
ONCE_PHASES = ("setup",)


@dataclass
class Phases:
    """Seconds per phase (FRAMEWORK_PHASES, OWN_PHASES, ONCE_PHASES): what verify's
    breakdown and benchmarks/steps_overhead.py report."""

    seconds: dict[str, float] = field(default_factory=dict)

    def timed(self, phase: str, fn: Callable[[], T]) -> T:
        t0 = time.perf_counter()
        try:
            return fn()
        finally:
            self.add(phase, time.perf_counter() - t0)

    def add(self, phase: str, seconds: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds


class StepVerifier:
    """Captures and checks one step over its buckets."""

    def __init__(self, step: Step, ref: str, adapter: Adapter, samples: int, seed: int,
                 moved_memory: MovedMemory | None = None):
        self.step = step
        self.ref = ref
        self.adapter = adapter
        self.rows = RowCompare(step, adapter)
        self.samples = samples
        self.seed = seed
        self.phases = Phases()
        self.on_progress: Callable[..., None] | None = None
        self._prepared = False
        # why a sample failed; `moved_memory` checks a captured graph's kernel pointers (by
        # default those read right after each bucket's capture: self.pointers)
        self.pointers = PointerCheck()
        self.causes = CauseFinder(step, adapter, self.rows, self.phases.timed,
                                  self.pointers if moved_memory is None else moved_memory)
        self.inputs: int | None = None  # how many inputs make_inputs returns (once made)
        self.pads: tuple[Fill, ...] = ()  # one pad value per input

    def prepare(self) -> None:
        """graphcert's one-time set-up (the reader's imports and driver bindings, the first
        memory reads), timed as phase "setup" so that no bucket is charged with it.
        Idempotent."""
        if not self._prepared:
            self._prepared = True

            def setup() -> None:
                self.adapter.prepare()
                self.adapter.graph_memory()  # the first read's driver set-up is one-time

            self.phases.timed("setup", setup)

    @cached_property
    def _options(self) -> dict[str, Any]:
        """The ref's options, part of every bucket's cache key (parsed once)."""
        return dict(parse_ref(self.ref).options)

    def _where(self, capacity: int) -> str:
        return f"step {self.step.name}, bucket {capacity:,}"

    def capture(self, capacity: int) -> tuple[Captured, tuple[object, ...]]:
        """Capture at the bucket's size; a framework capture error becomes one line naming
        the step, the bucket and the fix."""
        self.prepare()
        values = self.phases.timed("inputs", lambda: as_tuple(self.step.make_inputs(capacity)))
        self.inputs = len(values)
        self.pads = resolve(self.step.pad_value, len(values), "pad_value", 0.0)  # or refused
        static = self.phases.timed("pad", lambda: self.adapter.static_inputs(values))
        t0 = time.perf_counter()
        try:
            captured = self.adapter.capture(self.step, static)
        except GraphcertError:
            raise
        except Exception as exc:  # the framework's own error, translated
            fix = self.adapter.capture_error(exc)
            raised = f"capture raised {first_line(exc, typed=True)}"
            raise StepCaptureError(f"{self._where(capacity)}: " + (fix or raised)) from None
        framework_s = (captured.capture_s or 0.0) + (captured.instantiate_s or 0.0)
        own_s = float(getattr(captured, "graphcert_s", 0.0))  # e.g. reading the pool's bytes
        self.phases.add("capture", framework_s)
        self.phases.add("memory", own_s)
        self.phases.add("warmup", max(time.perf_counter() - t0 - framework_s - own_s, 0.0))
        return captured, static

    def verify_bucket(self, capacity: int, lower: int | None) -> AnyClass:
        sizes = sample_sizes(capacity, self.samples, self.seed, lower=lower)
        self.prepare()
        try:
            captured, static = self.capture(capacity)
        except PadValueError:
            raise  # the declaration does not fit the inputs: no bucket's failure
        except GraphcertError as exc:
            return ClassResult(capacity, False, (exc.one_line(),),
                               padding_waste=padding_waste(capacity, sizes),
                               cause=Cause.CAPTURE if isinstance(exc, StepCaptureError)
                               else None)
        rows: list[SampleResult] = []
        try:
            snap = self.phases.timed("snapshot", lambda: self.adapter.snapshot(
                captured, f"{self.step.name}-b{capacity}"))
            self.pointers.snapshot = snap  # the pointers as captured, for moved memory
            memory = self.phases.timed("memory", self.adapter.graph_memory)  # graph alive
            replay_s, eager_s = self._time_both(captured, static)
            for n in sizes:
                row = self._sample(captured, static, capacity, n)
                rows.append(row)
                if self.on_progress:
                    self.on_progress(1, f"{self.ref} bucket {capacity:,}")
        finally:
            self.phases.timed("release", captured.release)  # the framework frees its pool
        facts = StepBucket(self.adapter.framework, captured.capture_s, captured.instantiate_s,
                           captured.pool_bytes, memory, replay_s, eager_s,
                           cache_key(self.ref, self._options, capacity, snap.topology_hash,
                                     SNAPSHOT_SCHEMA_VERSION))
        failed = [r for r in rows if r.error]
        return ClassResult(capacity, not failed, _collapsed(failed, capacity),
                           snap.topology_hash, snap.shape_hash, snap.node_count, snap.counts(),
                           None, padding_waste(capacity, sizes), tuple(rows), snapshot=snap,
                           bucket=facts, cause=failed[0].cause if failed else None)

    def _time_both(self, captured: Captured, static: Sequence[object]) -> tuple[float, float]:
        """Median seconds of a replay and of an eager call, each waited for, at the bucket.
        Each phase is charged the whole loop's wall time (not median x count), so nothing
        the framework spends falls into graphcert's unaccounted "other"."""
        def median(phase: str, launch: Callable[[], None]) -> float:
            times = []
            start = time.perf_counter()
            for _ in range(TIMED_LAUNCHES):
                t0 = time.perf_counter()
                launch()
                self.adapter.synchronize()
                times.append(time.perf_counter() - t0)
            self.phases.add(phase, time.perf_counter() - start)
            return statistics.median(times)  # numpy's imports numpy.ma on first use

        replay_s = median("replay", captured.launch)
        eager_s = median("eager", lambda: self.adapter.call(self.step, static))
        return replay_s, eager_s

    def _sample(self, captured: Captured, static: Sequence[object], capacity: int,
                n: int) -> SampleResult:
        where = f"{self._where(capacity)}, n={n:,}"
        try:
            values = self.phases.timed("inputs", lambda: as_tuple(self.step.make_inputs(n)))
            want = self.phases.timed("eager", lambda: self.adapter.eager(self.step, values))
            kept = self.phases.timed("compare", lambda: self.rows.keep(want, n))
            self.phases.timed("pad", lambda: self.adapter.pad_into(static, values, n,
                                                                   self.pads))
            # before the replay: a kernel pointer that no longer points where it did would
            # read freed memory, and a replay that happens to match would hide it
            moved = self.phases.timed("snapshot", lambda: self.causes.moved_memory(captured))
            if moved is not None:
                return SampleResult(n, output_equal=False, cause=Cause.MOVED_MEMORY,
                                    error=f"{where}: {moved_memory_reason(*moved)}")

            def replay() -> None:
                captured.launch()
                self.adapter.synchronize()

            self.phases.timed("replay", replay)
            problem = self.phases.timed("compare", lambda: self.rows.mismatch(
                captured.outputs, kept, n))
        except GraphcertError:
            raise
        except Exception as exc:  # the step's own code failed at this size
            raised = first_line(exc, typed=True)
            return SampleResult(n, error=f"{where}: the step raised {raised}",
                                cause=Cause.RAISED)
        if problem is None:
            return SampleResult(n, output_equal=True)
        why = self.causes.explain(captured, static, capacity, n, values, kept, self.pads)
        return SampleResult(n, output_equal=False, error=f"{where}: {problem}; {why.text}",
                            cause=why.cause)


def _collapsed(failed: Sequence[SampleResult], capacity: int) -> tuple[str, ...]:
    """The failing samples' errors: each cause's first in full, then one line counting the
    rest of that cause."""
    first: dict[Cause | None, SampleResult] = {}
    more: dict[Cause | None, int] = {}
    for row in failed:
        more[row.cause] = more.get(row.cause, -1) + 1
        first.setdefault(row.cause, row)
    out: list[str] = []
    for cause, row in first.items():  # in the order the causes first failed
        out.append(row.error or "")
        if more[cause]:
            label = f" ({cause.label})" if cause is not None else ""
            out.append(f"{more[cause]} more sampled size(s) of bucket {capacity:,} fail the "
                       f"same way{label}")
    return tuple(out)


def open_adapter(step: Step, device: int = 0) -> Adapter:
    """The step's framework adapter on device number `device`; FrameworkMissing (its reason)
    when it cannot run."""
    try:
        return adapter_for(step.framework, device)
    except FrameworkMissing:
        raise
    except GraphcertError:
        raise
    except Exception as exc:
        raise FrameworkMissing(f"{step.framework} cannot start: "
                               f"{first_line(exc, typed=True)}") from None


def verify_step(step: Step, ref: str, capacities: Sequence[int], *, samples: int = 4,
                seed: int = 0, classes_spec: str | None = None,
                on_class: Callable[[AnyClass], None] | None = None,
                on_progress: Callable[..., None] | None = None,
                adapter: Adapter | None = None, device: int = 0) -> VerifyResult:
    """Verify a framework step over its buckets on device number `device`: the typed result
    with its verdict, as `verify` makes for a workload (so certificates, the gate, show and
    diff take it)."""
    verifier = StepVerifier(step, ref, adapter or open_adapter(step, device), samples, seed)
    verifier.on_progress = on_progress
    verifier.prepare()
    classes: list[AnyClass] = []
    for capacity in capacities:
        lower = capacities.lower_edge(capacity) if isinstance(capacities, Buckets) else None
        result = verifier.verify_bucket(capacity, lower)
        classes.append(result)
        if on_progress:  # a failed bucket still completes its share
            on_progress(max(samples - len(result.samples), 0))
        if on_class:
            on_class(result)
    spec = classes_spec if classes_spec is not None else ",".join(map(str, capacities))
    settings = VerifySettings(samples, seed, f"{step.framework} capture", spec,
                              framework=step.framework, rtol=step.rtol, atol=step.atol,
                              pad_value=_as_setting(recorded(step.pad_value, verifier.inputs)))
    return VerifyResult(tuple(classes), transitions(classes), dict(verifier.phases.seconds),
                        settings, verdict=VerifyResult.judge(classes))


def _as_setting(pads: float | list[float]) -> float | tuple[float, ...]:
    return tuple(pads) if isinstance(pads, list) else pads


def capture_step(step: Step, ref: str, sizes: Sequence[int],
                 capacity_of: Callable[[int], int], *, adapter: Adapter | None = None,
                 device: int = 0) -> list[CaptureResult]:
    """Capture the step once per bucket of `sizes` on device number `device` (for `capture`
    and `inventory`)."""
    verifier = StepVerifier(step, ref, adapter or open_adapter(step, device), 2, 0)
    out = []
    for n in sizes:
        capacity = capacity_of(n)
        captured, _ = verifier.capture(capacity)
        try:
            snap = verifier.adapter.snapshot(captured, f"{step.name}-b{capacity}")
            snap.meta.update({"workload": ref, "name": step.name, "capacity": capacity, "n": n,
                              "mode": f"{step.framework} capture"})
            out.append(CaptureResult(capacity, n, snap, snapshot_to_dot(snap, step.name),
                                     captured.capture_s,
                                     captured.instantiate_s or 0.0, 0.0,
                                     captured.pool_bytes or 0,
                                     verifier.adapter.graph_memory()))
        finally:
            captured.release()
    return out
