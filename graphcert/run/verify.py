"""`verify`: one captured graph per capacity class can be updated in place for every size in
the class, and still computes the right answer. Runs on a GPU.

Per class: capture at the capacity (the class reference) and instantiate; for each sample
size capture again, compare fingerprints (node-level diff on a difference), update the
reference exec from the sample (cuGraphExecUpdate), replay, compare with numpy. Where the
workload names its size parameters, also capture once at the lower edge and only set those
kernel arguments for each size (no re-capture): a graph whose launch geometry was frozen at
capture time computes wrong answers there. Across classes: what changes class to class.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from graphcert.buckets import Buckets, padding_waste, sample_sizes
from graphcert.cuda.context import RunContext
from graphcert.cuda.graph import GraphExec
from graphcert.cuda.snapshot import read_snapshot_indexed
from graphcert.cuda.stream import Stream
from graphcert.errors import GraphcertError
from graphcert.kinds.topology.result import (
    AnyClass,
    ClassResult,
    SampleResult,
    SkippedClass,
    Transition,
    UpdateOutcome,
    VerifyResult,
    VerifySettings,
)
from graphcert.model import GraphSnapshot, attr_class, diff_snapshots
from graphcert.outputs import mismatches
from graphcert.run.session import WorkloadSession
from graphcert.workloads.loaded import NativeWorkload

T = TypeVar("T")


@dataclass
class _ClassWork:
    """A class being verified (mutable while it runs); `result()` freezes it."""

    capacity: int
    predicted: dict[str, int] | None = None
    failures: list[str] = field(default_factory=list)
    snapshot: GraphSnapshot | None = None
    samples: list[SampleResult] = field(default_factory=list)
    waste: dict[str, int] = field(default_factory=dict)

    def fail(self, reason: str) -> None:
        if reason not in self.failures:
            self.failures.append(reason)

    def result(self) -> ClassResult:
        s = self.snapshot
        return ClassResult(
            self.capacity, not self.failures, tuple(self.failures),
            s.topology_hash if s else None, s.shape_hash if s else None,
            s.node_count if s else None, s.counts() if s else {}, self.predicted,
            dict(self.waste), tuple(self.samples), snapshot=s)


def _describe_shape_change(ref: GraphSnapshot, got: GraphSnapshot, n: int) -> str:
    d = diff_snapshots(ref, got)
    if not d.topology_equal:
        return (f"topology at n={n:,} differs from the class reference "
                f"({d.summary()}): +{len(d.added)} -{len(d.removed)} nodes")
    for change in d.changed:
        if change.field in ("grid", "block", "shared_mem_bytes"):
            node = ref.nodes[change.index_a]
            return (f"launch geometry frozen at capture time: node {change.index_a} "
                    f"(kernel {node.attrs.get('name')}) has {change.field} "
                    f"{change.value_b} at n={n:,} but {change.value_a} at the class capacity; "
                    f"size launches from the class capacity and pass n as a parameter")
    # the first change of a shape attribute (a parameter's value may differ first, but values
    # are outside the shape hash that differed)
    first = next((c for c in d.changed if attr_class(ref.nodes[c.index_a].kind, c.field)
                  != "value"), None)
    where = f": node {first.index_a} {first.field}" if first else ""
    return f"launch shape at n={n:,} differs from the class reference{where}"


class Verifier:
    """Verifies one workload over a list of capacity classes."""

    def __init__(self, session: WorkloadSession, samples: int, seed: int, mode: str):
        self.s = session
        self.samples = samples
        self.seed = seed
        self.mode = mode
        self.stream = Stream()
        self.tol = session.hooks.tolerance()
        self.on_progress: Callable[..., None] | None = None

    def _timed(self, phase: str, fn: Callable[[], T]) -> T:
        t0 = time.perf_counter()
        try:
            return fn()
        finally:
            self.s.timings.add(phase, time.perf_counter() - t0)

    def _replay_and_compare(self, exe: GraphExec, n: int) -> list[str]:
        def replay() -> None:
            exe.launch(self.stream)
            self.stream.synchronize()

        self._timed("replay", replay)
        return self._timed("compare", lambda: mismatches(self.s.outputs(n),
                                                         self.s.reference(n), self.tol))

    def verify_class(self, capacity: int, lower: int | None = None) -> AnyClass:
        predicted = self.s.hooks.predict(capacity)
        shortfall = self.s.memory_shortfall(capacity)
        if shortfall:
            return SkippedClass(capacity, shortfall, predicted)
        work = _ClassWork(capacity, predicted)
        sizes = sample_sizes(capacity, self.samples, self.seed, lower=lower)
        work.waste = padding_waste(capacity, sizes)
        self.s.prepare(capacity)
        ref_graph = self.s.record_graph(self.stream, capacity, self.mode)
        try:
            work.snapshot, _ = read_snapshot_indexed(ref_graph)
            self._check_prediction(work)
            exe = self._timed("instantiate", ref_graph.instantiate)
            try:
                for n in sizes:
                    work.samples.append(self._sample(work, exe, n))
                    if self.on_progress:
                        self.on_progress(1, f"{self.s.ref} class {capacity:,}")
            finally:
                exe.destroy()
            try:
                self._param_updates(work)
            except GraphcertError as exc:
                work.fail(f"size-parameter update: {exc.one_line()}")
        finally:
            ref_graph.destroy()
        return work.result()

    def _check_prediction(self, work: _ClassWork) -> None:
        if work.predicted is None or work.snapshot is None:
            return
        counts = work.snapshot.counts()
        off = {k: (counts.get(k, 0), v) for k, v in work.predicted.items()
               if counts.get(k, 0) != v}
        if off:
            work.fail("node counts differ from the workload's prediction: " + ", ".join(
                f"{k} {got} (predicted {want})" for k, (got, want) in sorted(off.items())))

    def _sample(self, work: _ClassWork, exe: GraphExec, n: int) -> SampleResult:
        assert work.snapshot is not None
        try:
            graph = self.s.record_graph(self.stream, n, self.mode)
        except GraphcertError as exc:
            work.fail(f"n={n:,}: {exc.one_line()}")
            return SampleResult(n, error=exc.one_line())
        row = SampleResult(n)
        try:
            snap, index_of = read_snapshot_indexed(graph)
            matches = None
            if work.predicted is not None:
                counts = snap.counts()
                matches = all(counts.get(k, 0) == v for k, v in work.predicted.items())
            row = replace(row, topology_equal=snap.topology_hash == work.snapshot.topology_hash,
                          shape_equal=snap.shape_hash == work.snapshot.shape_hash,
                          node_count_matches_prediction=matches)
            if not row.shape_equal:
                work.fail(_describe_shape_change(work.snapshot, snap, n))
            result = self._timed("update", lambda: exe.update(graph))
            failing = index_of.get(result.failing_node) if result.failing_node else None
            row = replace(row, update=UpdateOutcome(result.result, failing, result.reason))
            if not result.ok:
                work.fail(f"n={n:,}: exec update refused ({result.result}"
                          + (f" at node {failing}" if failing is not None else "")
                          + f"): {result.reason}")
                return row
            problems = self._replay_and_compare(exe, n)
            row = replace(row, output_equal=not problems)
            if problems:
                work.fail(f"n={n:,}: after update and replay, {problems[0]}")
        except GraphcertError as exc:
            row = replace(row, error=exc.one_line())
            work.fail(f"n={n:,}: {exc.one_line()}")
        finally:
            graph.destroy()
        return row

    def _param_updates(self, work: _ClassWork) -> None:
        """Capture at the lower edge once; for each size set only the size arguments."""
        params = self.s.hooks.size_params()
        if not params or not work.samples:
            return
        base_n = work.samples[0].n
        graph = self.s.record_graph(self.stream, base_n, self.mode)
        try:
            snap, index_of = read_snapshot_indexed(graph)
            by_handle = {int(node): node for node in graph.node_handles()}
            handles = {index: by_handle[handle] for handle, index in index_of.items()}
            targets = [(p, handles[node.index], node) for p in params for node in snap.nodes
                       if node.kind.value == "kernel" and node.attrs.get("name") == p.kernel]
            missing = {p.kernel for p in params} - {p.kernel for p, _, _ in targets}
            if missing:
                work.fail(f"size parameters name kernels not in the graph: "
                          f"{', '.join(sorted(missing))}")
                return
            exe = self._timed("instantiate", graph.instantiate)
            try:
                for i, row in enumerate(work.samples):
                    n = row.n
                    for p, graph_node, _ in targets:
                        value = p.value(n)
                        t0 = time.perf_counter()
                        exe.set_kernel_argument(graph_node, p.index, value)
                        self.s.timings.add("update", time.perf_counter() - t0)
                    problems = self._replay_and_compare(exe, n)
                    work.samples[i] = replace(row, param_update_output_equal=not problems)
                    if problems:
                        culprit = _frozen_node(snap, work.snapshot, targets)
                        work.fail(
                            f"n={n:,}: after setting only the size parameters on a graph "
                            f"captured at n={base_n:,}, {problems[0]}" + culprit)
            finally:
                exe.destroy()
        finally:
            graph.destroy()


def _frozen_node(base: GraphSnapshot, ref: GraphSnapshot | None,
                 targets: list[Any]) -> str:
    """Name the node whose geometry differs between the lower-edge capture and the class
    reference: that is where launch geometry was frozen at capture time."""
    if ref is None:
        return ""
    for _, _, node in targets:
        if node.index < len(ref.nodes):
            other = ref.nodes[node.index]
            for key in ("grid", "block", "shared_mem_bytes"):
                if node.attrs.get(key) != other.attrs.get(key):
                    return (f"; launch geometry frozen at capture time: node {node.index} "
                            f"(kernel {node.attrs.get('name')}) {key} {node.attrs.get(key)} "
                            f"vs {other.attrs.get(key)} at the class capacity")
    return ""


def transitions(classes: Sequence[AnyClass]) -> tuple[Transition, ...]:
    """What changes from each verified class to the next: parameters only / launch shape /
    topology (only topology needs a new capture)."""
    done = [c for c in classes if isinstance(c, ClassResult) and c.snapshot is not None]
    out = []
    for a, b in zip(done, done[1:], strict=False):
        assert a.snapshot is not None and b.snapshot is not None
        out.append(Transition(a.capacity, b.capacity,
                              diff_snapshots(a.snapshot, b.snapshot).summary()))
    return tuple(out)


def verify(ctx: RunContext, ref: str, capacities: Sequence[int], *, samples: int = 4,
           seed: int = 0, mode: str = "global", workload: NativeWorkload | None = None,
           classes_spec: str | None = None,
           on_class: Callable[[AnyClass], None] | None = None,
           on_progress: Callable[..., None] | None = None) -> VerifyResult:
    """Verify `ref` over `capacities`: the typed result with its verdict (a class that could
    not run makes it incomplete, never a pass). `classes_spec` is the class range as the user
    wrote it, kept in the settings. `on_progress(units, description)` is called once per
    sample, and each class completes `samples` units in all."""
    session = WorkloadSession(ctx, ref, workload)
    verifier = Verifier(session, samples, seed, mode)
    verifier.on_progress = on_progress
    classes: list[AnyClass] = []
    try:
        for capacity in capacities:
            try:
                # A bucket list's lower edge is the previous bucket + 1, not capacity/2 + 1.
                lower = (capacities.lower_edge(capacity) if isinstance(capacities, Buckets)
                         else None)
                result: AnyClass = verifier.verify_class(capacity, lower)
            except GraphcertError as exc:
                result = ClassResult(capacity, False, (exc.one_line(),),
                                     predicted=session.hooks.predict(capacity))
            classes.append(result)
            if on_progress:  # a skipped or failed class still completes its share
                done = len(result.samples) if isinstance(result, ClassResult) else 0
                on_progress(max(samples - done, 0))
            if on_class:
                on_class(result)
        session.release()
    finally:
        verifier.stream.destroy()
    phases = {"compile": 0.0, **session.timings.phases}
    spec = classes_spec if classes_spec is not None else ",".join(map(str, capacities))
    return VerifyResult(tuple(classes), transitions(classes), phases,
                        VerifySettings(samples, seed, mode, spec),
                        verdict=VerifyResult.judge(classes))
