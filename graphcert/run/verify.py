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
from dataclasses import dataclass, field
from typing import Any

from graphcert.classes import Buckets, padding_waste, sample_sizes
from graphcert.cuda.context import RunContext
from graphcert.cuda.graph import GraphExec
from graphcert.cuda.snapshot import read_snapshot_indexed
from graphcert.cuda.stream import Stream
from graphcert.errors import GraphcertError
from graphcert.model import GraphSnapshot, diff_snapshots
from graphcert.run.outputs import mismatches
from graphcert.run.session import WorkloadSession
from graphcert.workloads.base import predict, size_params, tolerance


@dataclass
class ClassReport:
    capacity: int
    status: str = "pass"
    reasons: list[str] = field(default_factory=list)
    snapshot: GraphSnapshot | None = None
    predicted: dict[str, int] | None = None
    samples: list[dict[str, Any]] = field(default_factory=list)
    waste: dict[str, int] = field(default_factory=dict)

    def fail(self, reason: str) -> None:
        self.status = "fail"
        if reason not in self.reasons:
            self.reasons.append(reason)

    def to_json(self) -> dict[str, Any]:
        s = self.snapshot
        return {"capacity": self.capacity, "status": self.status,
                "reason": "; ".join(self.reasons) or None,
                "topology_hash": s.topology_hash if s else None,
                "shape_hash": s.shape_hash if s else None,
                "node_count": s.node_count if s else None,
                "counts": s.counts() if s else {}, "predicted": self.predicted,
                "padding_waste": self.waste, "samples": self.samples}


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
    first = d.changed[0] if d.changed else None
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
        self.tol = tolerance(session.workload)
        self.on_progress: Callable[..., None] | None = None

    def _timed(self, phase: str, fn: Callable[[], Any]) -> Any:
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

    def verify_class(self, capacity: int, lower: int | None = None) -> ClassReport:
        report = ClassReport(capacity, predicted=predict(self.s.workload, capacity))
        shortfall = self.s.memory_shortfall(capacity)
        if shortfall:
            report.status, report.reasons = "skipped", [shortfall]
            return report
        sizes = sample_sizes(capacity, self.samples, self.seed, lower=lower)
        report.waste = padding_waste(capacity, sizes)
        self.s.prepare(capacity)
        ref_graph = self.s.record_graph(self.stream, capacity, self.mode)
        try:
            report.snapshot, _ = read_snapshot_indexed(ref_graph)
            self._check_prediction(report)
            exe = self._timed("instantiate", ref_graph.instantiate)
            try:
                for n in sizes:
                    report.samples.append(self._sample(report, exe, n))
                    if self.on_progress:
                        self.on_progress(1, f"{self.s.ref} class {capacity:,}")
            finally:
                exe.destroy()
            try:
                self._param_updates(report, sizes)
            except GraphcertError as exc:
                report.fail(f"size-parameter update: {exc.one_line()}")
        finally:
            ref_graph.destroy()
        return report

    def _check_prediction(self, report: ClassReport) -> None:
        if report.predicted is None or report.snapshot is None:
            return
        counts = report.snapshot.counts()
        off = {k: (counts.get(k, 0), v) for k, v in report.predicted.items()
               if counts.get(k, 0) != v}
        if off:
            report.fail("node counts differ from the workload's prediction: " + ", ".join(
                f"{k} {got} (predicted {want})" for k, (got, want) in sorted(off.items())))

    def _sample(self, report: ClassReport, exe: GraphExec, n: int) -> dict[str, Any]:
        row: dict[str, Any] = {"n": n, "topology_equal": None, "shape_equal": None,
                               "update": None, "output_equal": None,
                               "param_update_output_equal": None,
                               "node_count_matches_prediction": None, "error": None}
        assert report.snapshot is not None
        try:
            graph = self.s.record_graph(self.stream, n, self.mode)
        except GraphcertError as exc:
            row["error"] = exc.one_line()
            report.fail(f"n={n:,}: {exc.one_line()}")
            return row
        try:
            snap, index_of = read_snapshot_indexed(graph)
            row["topology_equal"] = snap.topology_hash == report.snapshot.topology_hash
            row["shape_equal"] = snap.shape_hash == report.snapshot.shape_hash
            if report.predicted is not None:
                counts = snap.counts()
                row["node_count_matches_prediction"] = all(
                    counts.get(k, 0) == v for k, v in report.predicted.items())
            if not row["shape_equal"]:
                report.fail(_describe_shape_change(report.snapshot, snap, n))
            result = self._timed("update", lambda: exe.update(graph))
            failing = index_of.get(result.failing_node) if result.failing_node else None
            row["update"] = {"result": result.result, "failing_node": failing,
                             "reason": result.reason}
            if not result.ok:
                report.fail(f"n={n:,}: exec update refused ({result.result}"
                            + (f" at node {failing}" if failing is not None else "")
                            + f"): {result.reason}")
                return row
            problems = self._replay_and_compare(exe, n)
            row["output_equal"] = not problems
            if problems:
                report.fail(f"n={n:,}: after update and replay, {problems[0]}")
        except GraphcertError as exc:
            row["error"] = exc.one_line()
            report.fail(f"n={n:,}: {exc.one_line()}")
        finally:
            graph.destroy()
        return row

    def _param_updates(self, report: ClassReport, sizes: list[int]) -> None:
        """Capture at the lower edge once; for each size set only the size arguments."""
        params = size_params(self.s.workload)
        if not params or not sizes:
            return
        base_n = sizes[0]
        graph = self.s.record_graph(self.stream, base_n, self.mode)
        try:
            snap, index_of = read_snapshot_indexed(graph)
            by_handle = {int(node): node for node in graph.node_handles()}
            handles = {index: by_handle[handle] for handle, index in index_of.items()}
            targets = [(p, handles[node.index], node) for p in params for node in snap.nodes
                       if node.kind.value == "kernel" and node.attrs.get("name") == p.kernel]
            missing = {p.kernel for p in params} - {p.kernel for p, _, _ in targets}
            if missing:
                report.fail(f"size parameters name kernels not in the graph: "
                            f"{', '.join(sorted(missing))}")
                return
            exe = self._timed("instantiate", graph.instantiate)
            try:
                for row in report.samples:
                    n = row["n"]
                    for p, graph_node, _ in targets:
                        value = p.value(n)
                        t0 = time.perf_counter()
                        exe.set_kernel_argument(graph_node, p.index, value)
                        self.s.timings.add("update", time.perf_counter() - t0)
                    problems = self._replay_and_compare(exe, n)
                    row["param_update_output_equal"] = not problems
                    if problems:
                        culprit = _frozen_node(snap, report.snapshot, targets)
                        report.fail(
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


def transitions(reports: list[ClassReport]) -> list[dict[str, Any]]:
    """What changes from each verified class to the next: parameters only / launch shape /
    topology (only topology needs a new capture)."""
    done = [r for r in reports if r.snapshot is not None]
    out = []
    for a, b in zip(done, done[1:], strict=False):
        assert a.snapshot is not None and b.snapshot is not None
        out.append({"from": a.capacity, "to": b.capacity,
                    "change": diff_snapshots(a.snapshot, b.snapshot).summary()})
    return out


def verify(ctx: RunContext, ref: str, capacities: Sequence[int], *, samples: int = 4,
           seed: int = 0, mode: str = "global", workload: Any = None,
           on_class: Callable[[ClassReport], None] | None = None,
           on_progress: Callable[..., None] | None = None,
           ) -> tuple[list[ClassReport], dict[str, float], WorkloadSession]:
    """Verify `ref` over `capacities`; returns the class reports, the time breakdown and the
    session (for the certificate's workload identity). `on_progress(units, description)`
    is called once per sample, and each class completes `samples` units in all."""
    session = WorkloadSession(ctx, ref, workload)
    verifier = Verifier(session, samples, seed, mode)
    verifier.on_progress = on_progress
    reports = []
    try:
        for capacity in capacities:
            try:
                # A bucket list's lower edge is the previous bucket + 1, not capacity/2 + 1.
                lower = (capacities.lower_edge(capacity) if isinstance(capacities, Buckets)
                         else None)
                report = verifier.verify_class(capacity, lower)
            except GraphcertError as exc:
                report = ClassReport(capacity, predicted=predict(session.workload, capacity))
                report.fail(exc.one_line())
            reports.append(report)
            if on_progress:  # a skipped or failed class still completes its share
                on_progress(max(samples - len(report.samples), 0))
            if on_class:
                on_class(report)
        session.release()
    finally:
        verifier.stream.destroy()
    return reports, dict(session.timings.phases), session
