"""Comparing two certificates' results: timings with nvbench-compare interval logic, capacity
classes by topology and shape hash. Pure and import-light; used by the gate and by diff."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from graphcert.cert.certificate import Certificate
from graphcert.cert.results import (
    QUANTITIES,
    SIDES,
    BenchResult,
    ClassResult,
    Timing,
    VerifyResult,
)
from graphcert.errors import GraphcertError, InputError
from graphcert.model.jsontext import short_hash

if TYPE_CHECKING:
    from graphcert.cert.profilecompare import NodeComparison
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


def compare_bench(baseline: BenchResult, current: BenchResult, *,
                  min_noise: float = 0.005) -> tuple[list[TimingComparison], list[str]]:
    """Every timing of sizes both results hold; notes for what could not be compared."""
    notes: list[str] = []
    base_sizes = {s.n: s for s in baseline.sizes}
    cur_sizes = {s.n: s for s in current.sizes}
    out: list[TimingComparison] = []
    for n in sorted(set(base_sizes) | set(cur_sizes)):
        if n not in cur_sizes or n not in base_sizes:
            notes.append(f"n={n} only in the {'baseline' if n in base_sizes else 'current'}")
            continue
        bs, cs = base_sizes[n], cur_sizes[n]
        throttled = bs.throttled or cs.throttled
        for side in SIDES:
            for q in QUANTITIES:
                bt, ct = bs.way(side).get(q), cs.way(side).get(q)
                if bt is None or ct is None:
                    # missing on one side only is news; on both, nothing was lost
                    if q == "device" and (bt is not None or ct is not None):
                        notes.append(f"n={n} {side} device time unavailable on "
                                     f"{'the baseline' if bt is None else 'current'}")
                    continue
                diff, thr, change, why = compare_timing(bt, ct, min_noise=min_noise)
                if throttled and change in (Change.SLOWER, Change.FASTER):
                    change, why = Change.AMBIGUOUS, "GPU clocks throttled"
                out.append(TimingComparison(n, side, q, bt.median_s, ct.median_s, diff, thr,
                                            change, why))
    return out, notes


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


def compare_topology(baseline: VerifyResult, current: VerifyResult) -> list[ClassComparison]:
    """Class by class: same, shape (launch shape only) or topology changed."""
    base = {c.capacity: c for c in baseline.classes}
    cur = {c.capacity: c for c in current.classes}
    out = []
    for cap in sorted(set(base) | set(cur)):
        b, c = base.get(cap), cur.get(cap)
        node_diff: tuple[str, ...] = ()
        if b is None or c is None:
            change = "only baseline" if b is not None else "only current"
        elif b.topology_hash is None or c.topology_hash is None:
            change = "not comparable"
        elif b.topology_hash != c.topology_hash:
            change = "topology"
        elif b.shape_hash != c.shape_hash:
            change = "shape"
        else:
            change = "same"
        if change in ("topology", "shape") and isinstance(b, ClassResult) and \
                isinstance(c, ClassResult):
            node_diff = _snapshot_diff(b.embedded_snapshot, c.embedded_snapshot)
        out.append(ClassComparison(
            cap, change, b.topology_hash if b else None, c.topology_hash if c else None,
            b.shape_hash if b else None, c.shape_hash if c else None,
            dict(b.counts) if b else {}, dict(c.counts) if c else {}, node_diff))
    return out


def _snapshot_diff(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None
                   ) -> tuple[str, ...]:
    """Node-level diff lines where both classes embed their snapshot (optional evidence: an
    unreadable one leaves the hashes and counts, which decide)."""
    if a is None or b is None:
        return ()
    from graphcert.model import diff_snapshots, snapshot_from_json

    try:
        diff = diff_snapshots(snapshot_from_json(a), snapshot_from_json(b))
    except InputError:
        return ()
    return tuple(diff.summary_lines())


def _flatten(value: object, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): value}


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
    nodes: tuple[NodeComparison, ...] = ()  # profiles: by canonical index (issue 31)

    @property
    def graphs_differ(self) -> bool:
        """A capacity class that is not the same in both (its topology or launch shape
        changed, or it is in one only, or a side has no hash to compare); timings are
        measurements, compared but never 'equal', so a bench diff never differs here."""
        return any(c.change != "same" for c in self.classes)

    def to_dict(self) -> dict[str, Any]:
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
               if self.kind == "profile" else {}),
        }


def snapshots_differ(diff: SnapshotDiff) -> bool:
    """Two snapshots differ where a fingerprint does (topology, or launch shape: grid, block,
    shared memory, byte counts); kernel parameter values alone change with n and are outside
    both, as for CertificateDiff.graphs_differ."""
    return not (diff.topology_equal and diff.shape_equal)


def diff_certificates(a: Certificate, b: Certificate, *,
                      min_noise: float = 0.005) -> CertificateDiff:
    """Compare certificate `b` against `a` (the older); both of the same kind."""
    if a.kind != b.kind:
        raise GraphcertError(f"cannot compare a {a.kind} certificate with a {b.kind} one",
                             hint="diff two topology or two bench certificates")
    if a.kind == "sweep":
        raise GraphcertError("sweep certificates are not diffed",
                             hint="diff the bench certificates of their runs (the sweep "
                                  "certificate names them)")

    def changed(x: object, y: object) -> tuple[tuple[str, Any, Any], ...]:
        fx, fy = _flatten(x), _flatten(y)
        return tuple((k, fx.get(k), fy.get(k)) for k in sorted(set(fx) | set(fy))
                     if fx.get(k) != fy.get(k))

    classes: tuple[ClassComparison, ...] = ()
    timings: tuple[TimingComparison, ...] = ()
    notes: tuple[str, ...] = ()
    warnings: list[str] = []
    if a.workload.name != b.workload.name:  # allowed (a renamed workload), never silently
        warnings.append(f"these certificates are of different workloads ({a.workload.name} "
                        f"and {b.workload.name}); the comparison is across workloads")
    ra, rb = a.result, b.result
    nodes: tuple[NodeComparison, ...] = ()
    if a.kind == "profile":  # nodes lined up by canonical index; another topology refused
        from graphcert.cert.profilecompare import compare_profiles
        from graphcert.cert.results.profile import ProfileResult

        assert isinstance(ra, ProfileResult) and isinstance(rb, ProfileResult)
        found_nodes, found_notes = compare_profiles(ra, rb, node_limit=min_noise,
                                                    path_limit=min_noise)
        nodes, notes = tuple(found_nodes), tuple(found_notes)
        models = across_models(a, b)
        if models is not None:
            warnings.append(f"these profile certificates are {models} (the gate would not "
                            f"compare them)")
    if isinstance(ra, VerifyResult) and isinstance(rb, VerifyResult):
        classes = tuple(compare_topology(ra, rb))
    elif isinstance(ra, BenchResult) and isinstance(rb, BenchResult):
        found, found_notes = compare_bench(ra, rb, min_noise=min_noise)
        timings, notes = tuple(found), tuple(found_notes)
        models = across_models(a, b)
        if models is not None:  # shown, as diff shows what it is given, but never unflagged
            warnings.append(f"these bench certificates are {models} (the gate would not "
                            f"compare them)")
    return CertificateDiff(
        kind=a.kind, environment=changed(a.environment.to_json(), b.environment.to_json()),
        workload=changed(a.workload.to_json(), b.workload.to_json()),
        verdict=(a.recorded_verdict.passed, b.recorded_verdict.passed),
        classes=classes, timings=timings, notes=notes, warnings=tuple(warnings), nodes=nodes)


def fmt_seconds(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"
