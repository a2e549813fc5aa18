"""Comparing two certificates: the rows every kind's compare module gives (timings judged with
nvbench-compare interval logic, capacity classes by topology and shape hash, nodes), the
GPU-model rule, and `diff` of two certificates. Pure and import-light; used by the gate and
by diff. A kind's own comparison is graphcert/kinds/<kind>/compare.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, cast

from graphcert.cert.certificate import Certificate
from graphcert.cert.registry import spec
from graphcert.cert.results.figures import Timing
from graphcert.errors import GraphcertError
from graphcert.jsontypes import JSONObject
from graphcert.model.jsontext import short_hash

if TYPE_CHECKING:
    from graphcert.model import SnapshotDiff

MIN_SAMPLES = 10  # fewer samples than this: the noise estimate is not trusted
MAX_TRUSTED_NOISE = 0.5  # a side noisier than this cannot tell slower from same
# A faster GPU is not a faster graph: the one rule for timings of two GPUs, which the gate
# matches a baseline by and `diff` warns by (across_models).
ACROSS_MODELS = "timings are compared per GPU model, never across models"


def gpu_model(cert: Certificate) -> str:
    """The GPU model a certificate's timings belong to (its GPU's name)."""
    return cert.environment.gpu.name


def across_models(a: Certificate, b: Certificate) -> str | None:
    """None when `a` and `b` come from one GPU model, so their timings compare; else the
    words saying why they do not ("of different GPU models (A and B): timings are ...")."""
    ma, mb = gpu_model(a), gpu_model(b)
    if ma == mb:
        return None
    return f"of different GPU models ({ma} and {mb}): {ACROSS_MODELS}"


class Change(str, Enum):
    """How a current timing compares with its baseline."""

    SAME = "same"
    FASTER = "faster"
    SLOWER = "slower"
    AMBIGUOUS = "ambiguous"


@dataclass(frozen=True)
class TimingComparison:
    """One timing, baseline against current (medians in seconds, noise relative)."""

    n: int
    side: str  # stream | graph
    quantity: str  # host_enqueue | device | end_to_end
    baseline_s: float
    current_s: float
    diff: float  # (current - baseline) / baseline
    threshold: float
    change: Change
    reason: str | None = None

    @property
    def label(self) -> str:
        return f"n={self.n} {self.side} {self.quantity}"

    def describe(self) -> str:
        text = (f"{self.label}: {fmt_seconds(self.baseline_s)} -> {fmt_seconds(self.current_s)} "
                f"({self.diff:+.1%}, noise threshold {self.threshold:.1%}): {self.change.value}")
        return f"{text} ({self.reason})" if self.reason else text


def compare_timing(baseline: Timing, current: Timing, *,
                   min_noise: float = 0.005) -> tuple[float, float, Change, str | None]:
    """nvbench-compare style: (diff, threshold, change, why-ambiguous) of two timings.

    Within max(noise_b, noise_c, min_noise) they are the same; beyond it but with the two
    noise intervals still overlapping, or with a side too noisy or too few samples to trust,
    the change is ambiguous (reported, never failed); otherwise slower or faster.
    """
    b, c = baseline.median_s, current.median_s
    nb, nc = baseline.noise, current.noise
    diff = (c - b) / b if b > 0 else 0.0
    threshold = max(nb, nc, min_noise)
    if abs(diff) <= threshold:
        return diff, threshold, Change.SAME, None
    untrusted = [f"{name} has {t.samples} samples" for name, t in
                 (("baseline", baseline), ("current", current)) if t.samples < MIN_SAMPLES]
    untrusted += [f"{name} noise {n:.0%}" for name, n in (("baseline", nb), ("current", nc))
                  if n > MAX_TRUSTED_NOISE]
    if untrusted:
        return diff, threshold, Change.AMBIGUOUS, ", ".join(untrusted)
    if abs(c - b) <= b * nb + c * nc:
        return diff, threshold, Change.AMBIGUOUS, "noise intervals overlap"
    return diff, threshold, (Change.SLOWER if diff > 0 else Change.FASTER), None


@dataclass(frozen=True)
class ClassComparison:
    """One capacity class, baseline against current."""

    capacity: int
    change: str  # same | shape | topology | only baseline | only current | not comparable
    baseline_topology: str | None
    current_topology: str | None
    baseline_shape: str | None
    current_shape: str | None
    baseline_counts: Mapping[str, int]
    current_counts: Mapping[str, int]
    node_diff: tuple[str, ...] = ()

    def describe(self) -> str:
        head = f"class {self.capacity}: "
        if self.change in ("only baseline", "only current", "not comparable"):
            return head + self.change
        if self.change == "same":
            return head + "unchanged"
        what, b, c = (("topology hash", self.baseline_topology, self.current_topology)
                      if self.change == "topology" else
                      ("shape hash", self.baseline_shape, self.current_shape))
        text = f"{head}{what} {hash_change(b, c)}; nodes {_counts_diff(self)}"
        if self.node_diff:
            text += "; " + "; ".join(self.node_diff)
        return text


def hash_change(a: str | None, b: str | None) -> str:
    """`a -> b`, shortened unless the short forms would look the same."""
    if a != b and short_hash(a) == short_hash(b):
        return f"{a} -> {b}"
    return f"{short_hash(a)} -> {short_hash(b)}"


def _counts_diff(c: ClassComparison) -> str:
    parts = []
    for kind in sorted(set(c.baseline_counts) | set(c.current_counts)):
        b, n = c.baseline_counts.get(kind, 0), c.current_counts.get(kind, 0)
        parts.append(f"{kind} {b}" if b == n else f"{kind} {b}->{n}")
    return ", ".join(parts) or "none"


def _flatten(value: object, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): value}


@dataclass(frozen=True)
class NodeComparison:
    """One node (or the critical path: index None), baseline against current, in ns."""

    label: str  # the class label
    index: int | None  # canonical index; None for a whole-replay row
    name: str  # kernel name, or the whole-replay row's ("critical path", "replay span")
    baseline_ns: float
    current_ns: float
    baseline_high_ns: float
    current_low_ns: float
    change: Change

    @property
    def diff(self) -> float:
        """(current - baseline) / baseline."""
        return (self.current_ns - self.baseline_ns) / self.baseline_ns \
            if self.baseline_ns > 0 else 0.0

    @property
    def where(self) -> str:
        return self.where_named(str)

    def where_named(self, shown: Callable[[str], str]) -> str:
        """Where, with the kernel's name as `shown` makes it (a view demangles it; the raw
        name is what is compared and what --json keeps)."""
        node = self.name if self.index is None else \
            f"node {self.index} ({shown(self.name)})"
        return f"{self.label} {node}"

    def describe(self, shown: Callable[[str], str] = str) -> str:
        return (f"{self.where_named(shown)}: {self.baseline_ns / 1e3:.3f} -> "
                f"{self.current_ns / 1e3:.3f} \u00b5s ({self.diff:+.1%}): {self.change.value}")


@dataclass(frozen=True)
class ResultsDiff:
    """What a kind's compare module finds between two certificates' results: capacity classes,
    timings or nodes (None: the kind compares no nodes), notes on what could not be compared,
    and warnings that make the comparison doubtful."""

    classes: tuple[ClassComparison, ...] = ()
    timings: tuple[TimingComparison, ...] = ()
    nodes: tuple[NodeComparison, ...] | None = None
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


class ResultsCompare(Protocol):
    """A kind's compare module, as diff and the gate use it."""

    def diff_results(self, a: Certificate, b: Certificate, *,
                     min_noise: float) -> ResultsDiff: ...


@dataclass(frozen=True)
class CertificateDiff:
    """Two certificates of one kind, compared field by field and result by result."""

    kind: str
    environment: tuple[tuple[str, Any, Any], ...]  # (dotted field, a, b) where they differ
    workload: tuple[tuple[str, Any, Any], ...]
    verdict: tuple[bool, bool]
    classes: tuple[ClassComparison, ...] = ()
    timings: tuple[TimingComparison, ...] = ()
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()  # what makes the comparison doubtful (printed on stderr)
    nodes: tuple[NodeComparison, ...] | None = None  # by canonical index (profiles); None: none

    @property
    def graphs_differ(self) -> bool:
        """A capacity class that is not the same in both (its topology or launch shape
        changed, or it is in one only, or a side has no hash to compare); timings are
        measurements, compared but never 'equal', so a bench diff never differs here."""
        return any(c.change != "same" for c in self.classes)

    def to_dict(self) -> JSONObject:
        return {
            "kind": self.kind,
            "warnings": list(self.warnings),
            "graphs_differ": self.graphs_differ,
            "environment": [{"field": f, "a": a, "b": b} for f, a, b in self.environment],
            "workload": [{"field": f, "a": a, "b": b} for f, a, b in self.workload],
            "verdict": {"a": self.verdict[0], "b": self.verdict[1]},
            "classes": [{"capacity": c.capacity, "change": c.change,
                         "topology_hash": {"a": c.baseline_topology, "b": c.current_topology},
                         "shape_hash": {"a": c.baseline_shape, "b": c.current_shape},
                         "counts": {"a": dict(c.baseline_counts), "b": dict(c.current_counts)},
                         "node_diff": list(c.node_diff)} for c in self.classes],
            "timings": [{"n": t.n, "side": t.side, "quantity": t.quantity,
                         "a_s": t.baseline_s, "b_s": t.current_s, "diff": t.diff,
                         "threshold": t.threshold, "change": t.change.value,
                         "reason": t.reason} for t in self.timings],
            "notes": list(self.notes),
            **({"nodes": [{"class": c.label, "index": c.index, "name": c.name,
                           "a_ns": c.baseline_ns, "b_ns": c.current_ns, "diff": c.diff,
                           "change": c.change.value} for c in self.nodes]}
               if self.nodes is not None else {}),
        }


def snapshots_differ(diff: SnapshotDiff) -> bool:
    """Two snapshots differ where a fingerprint does (topology, or launch shape: grid, block,
    shared memory, byte counts); kernel parameter values alone change with n and are outside
    both, as for CertificateDiff.graphs_differ."""
    return not (diff.topology_equal and diff.shape_equal)


def diff_certificates(a: Certificate, b: Certificate, *,
                      min_noise: float = 0.005) -> CertificateDiff:
    """Compare certificate `b` against `a` (the older); both of the same kind. The kind's
    compare module compares the results; a kind without one is compared by its environment,
    workload and verdict alone."""
    if a.kind != b.kind:
        raise GraphcertError(f"cannot compare a {a.kind} certificate with a {b.kind} one",
                             hint="diff two topology or two bench certificates")

    def changed(x: object, y: object) -> tuple[tuple[str, Any, Any], ...]:
        fx, fy = _flatten(x), _flatten(y)
        return tuple((k, fx.get(k), fy.get(k)) for k in sorted(set(fx) | set(fy))
                     if fx.get(k) != fy.get(k))

    warnings: list[str] = []
    if a.workload.name != b.workload.name:  # allowed (a renamed workload), never silently
        warnings.append(f"these certificates are of different workloads ({a.workload.name} "
                        f"and {b.workload.name}); the comparison is across workloads")
    kind = spec(a.kind)
    found = (cast(ResultsCompare, kind.module("compare")).diff_results(a, b, min_noise=min_noise)
             if kind.has("compare") else ResultsDiff())
    return CertificateDiff(
        kind=a.kind, environment=changed(a.environment.to_json(), b.environment.to_json()),
        workload=changed(a.workload.to_json(), b.workload.to_json()),
        verdict=(a.recorded_verdict.passed, b.recorded_verdict.passed),
        classes=found.classes, timings=found.timings, notes=found.notes,
        warnings=tuple(warnings) + found.warnings, nodes=found.nodes)


def fmt_seconds(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"
