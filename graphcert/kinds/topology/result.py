"""Typed results of verify: classes, samples, transitions, with the verdict. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from graphcert.cert.results.verdict import Verdict
from graphcert.kinds.topology.causes import Cause
from graphcert.kinds.topology.steps import StepBucket

if TYPE_CHECKING:
    from graphcert.model import GraphSnapshot


@dataclass(frozen=True)
class UpdateOutcome:
    """cuGraphExecUpdate's answer for one sample; failing_node in canonical order."""

    result: str
    failing_node: int | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.result == "success"

    def to_json(self) -> dict[str, Any]:
        return {"result": self.result, "failing_node": self.failing_node, "reason": self.reason}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> UpdateOutcome:
        return cls(str(doc["result"]), doc.get("failing_node"), doc.get("reason"))


@dataclass(frozen=True)
class SampleResult:
    """One sampled size of a class: each check is True, False or None (not reached)."""

    n: int
    topology_equal: bool | None = None
    shape_equal: bool | None = None
    update: UpdateOutcome | None = None
    output_equal: bool | None = None
    param_update_output_equal: bool | None = None
    node_count_matches_prediction: bool | None = None
    error: str | None = None
    cause: Cause | None = None  # why it failed (framework steps; None: passed, or a workload)

    # The yes/no checks, in the order the certificate and the views list them.
    CHECKS = ("topology_equal", "shape_equal", "output_equal", "param_update_output_equal",
              "node_count_matches_prediction")

    @property
    def ok(self) -> bool:
        """No error and no check that said no."""
        return self.error is None and all(getattr(self, c) is not False for c in self.CHECKS)

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "topology_equal": self.topology_equal,
                "shape_equal": self.shape_equal,
                "update": self.update.to_json() if self.update else None,
                "output_equal": self.output_equal,
                "param_update_output_equal": self.param_update_output_equal,
                "node_count_matches_prediction": self.node_count_matches_prediction,
                "error": self.error, **_cause_json(self.cause)}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> SampleResult:
        update = doc.get("update")
        return cls(int(doc["n"]), update=UpdateOutcome.from_json(update) if update else None,
                   error=doc.get("error"), cause=_cause_of(doc),
                   **{c: doc.get(c) for c in cls.CHECKS})


def _cause_json(cause: Cause | None) -> dict[str, str]:
    """`cause` where a step's class or sample failed; no key where it passed, for a
    workload, and in certificates older graphcert wrote (which then read back exactly)."""
    return {"cause": cause.value} if cause is not None else {}


def _cause_of(doc: Mapping[str, Any]) -> Cause | None:
    value = doc.get("cause")
    return Cause(value) if value is not None else None


@dataclass(frozen=True)
class ClassResult:
    """One capacity class that ran: pass or fail, its fingerprints, counts and samples.

    `snapshot` (the class reference graph) travels with a result made on the GPU, for the
    class-to-class transitions; it is not part of the certificate.
    """

    capacity: int
    passed: bool
    reasons: tuple[str, ...] = ()
    topology_hash: str | None = None
    shape_hash: str | None = None
    node_count: int | None = None
    counts: Mapping[str, int] = field(default_factory=dict)
    predicted: Mapping[str, int] | None = None
    padding_waste: Mapping[str, int] = field(default_factory=dict)
    samples: tuple[SampleResult, ...] = ()
    snapshot: GraphSnapshot | None = field(default=None, compare=False, repr=False)
    # A snapshot document a certificate may embed in the class (the schema allows it).
    embedded_snapshot: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    # A framework step's bucket: capture cost, pool and graph memory, cache key (else None).
    bucket: StepBucket | None = None
    cause: Cause | None = None  # why a step's bucket failed: its first failure's cause

    @property
    def one_cause(self) -> Cause | None:
        """The cause every failure of this class shares (its own and its samples'), or None
        where there is none or they differ (verify's verdict then lists the class apart)."""
        seen = {s.cause for s in self.samples if not s.ok}
        return self.cause if self.cause is not None and seen <= {self.cause} else None

    @property
    def status(self) -> str:
        return "pass" if self.passed else "fail"

    @property
    def reason(self) -> str | None:
        return "; ".join(self.reasons) or None

    def to_json(self) -> dict[str, Any]:
        return {"capacity": self.capacity, "status": self.status, "reason": self.reason,
                "topology_hash": self.topology_hash, "shape_hash": self.shape_hash,
                "node_count": self.node_count, "counts": dict(self.counts),
                "predicted": dict(self.predicted) if self.predicted is not None else None,
                "padding_waste": dict(self.padding_waste),
                "samples": [s.to_json() for s in self.samples],
                **({"bucket": self.bucket.to_json()} if self.bucket is not None else {}),
                **_cause_json(self.cause),
                **({"snapshot": self.embedded_snapshot} if self.embedded_snapshot else {})}


@dataclass(frozen=True)
class SkippedClass:
    """A class that could not run (e.g. it does not fit in device memory): incomplete."""

    capacity: int
    reason: str
    predicted: Mapping[str, int] | None = None

    status = "skipped"  # the certificate's word for it

    @property
    def reasons(self) -> tuple[str, ...]:
        return (self.reason,)

    # The class never ran: no samples, no graph, so no fingerprints or counts.
    @property
    def samples(self) -> tuple[SampleResult, ...]:
        return ()

    @property
    def topology_hash(self) -> str | None:
        return None

    @property
    def shape_hash(self) -> str | None:
        return None

    @property
    def node_count(self) -> int | None:
        return None

    @property
    def counts(self) -> Mapping[str, int]:
        return {}

    def to_json(self) -> dict[str, Any]:
        return {"capacity": self.capacity, "status": self.status, "reason": self.reason,
                "topology_hash": None, "shape_hash": None, "node_count": None, "counts": {},
                "predicted": dict(self.predicted) if self.predicted is not None else None,
                "padding_waste": {}, "samples": []}


AnyClass = ClassResult | SkippedClass


def class_from_json(doc: Mapping[str, Any]) -> AnyClass:
    """A class row of a topology certificate as its typed value."""
    if doc["status"] == "skipped":
        return SkippedClass(int(doc["capacity"]), str(doc.get("reason") or "skipped"),
                            doc.get("predicted"))
    reason = doc.get("reason")
    return ClassResult(
        int(doc["capacity"]), doc["status"] == "pass", (reason,) if reason else (),
        doc.get("topology_hash"), doc.get("shape_hash"), doc.get("node_count"),
        dict(doc.get("counts") or {}), doc.get("predicted"), dict(doc.get("padding_waste") or {}),
        tuple(SampleResult.from_json(s) for s in doc.get("samples", ())),
        embedded_snapshot=doc.get("snapshot"),
        bucket=StepBucket.from_json(doc["bucket"]) if doc.get("bucket") else None,
        cause=_cause_of(doc))


@dataclass(frozen=True)
class Transition:
    """What changes from one verified class to the next."""

    frm: int
    to: int
    change: str  # parameters only | launch shape | topology

    def to_json(self) -> dict[str, Any]:
        return {"from": self.frm, "to": self.to, "change": self.change}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Transition:
        return cls(int(doc["from"]), int(doc["to"]), str(doc["change"]))


@dataclass(frozen=True)
class VerifySettings:
    """How verify ran: sizes sampled per class, their seed, the capture mode and the classes
    as the user wrote them; a framework step's also its framework, tolerances and pad values
    (one number for every input, or a list with one per input) (None for a workload, and
    left out of the certificate)."""

    samples: int
    seed: int
    mode: str
    classes: str
    framework: str | None = None
    rtol: float | None = None
    atol: float | None = None
    pad_value: float | tuple[float, ...] | None = None

    _STEP = ("framework", "rtol", "atol", "pad_value")

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"samples": self.samples, "seed": self.seed, "mode": self.mode,
                               "classes": self.classes}
        doc.update({k: getattr(self, k) for k in self._STEP if getattr(self, k) is not None})
        if isinstance(self.pad_value, tuple):
            doc["pad_value"] = list(self.pad_value)
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> VerifySettings:
        pad = doc.get("pad_value")
        return cls(int(doc["samples"]), int(doc["seed"]), str(doc["mode"]), str(doc["classes"]),
                   doc.get("framework"), doc.get("rtol"), doc.get("atol"),
                   tuple(pad) if isinstance(pad, list) else pad)


@dataclass(frozen=True)
class VerifyResult:
    """verify of one workload over its classes, with the verdict `judge` gives them (no
    default: a result is made with its verdict)."""

    kind: ClassVar[str] = "topology"

    classes: tuple[AnyClass, ...]
    transitions: tuple[Transition, ...] = ()
    timings_s: Mapping[str, float] = field(default_factory=dict)
    settings: VerifySettings | None = None  # None: recorded without (synthetic certificates)
    verdict: Verdict = field(kw_only=True)

    @staticmethod
    def judge(classes: Sequence[AnyClass]) -> Verdict:
        """The verdict of verify, the one rule run/, the commands and the gate use: failed
        classes fail it; a skipped class makes it incomplete, never a pass. Classes that fail
        with one cause (a step's capture refused in every bucket) are one class's reasons and
        one line counting the rest."""
        failures = _failures([c for c in classes if isinstance(c, ClassResult) and not c.passed])
        missing = [f"class {c.capacity:,} not verified: {c.reason}" for c in classes
                   if isinstance(c, SkippedClass)]
        return Verdict.of(failures, missing)

    def rejudged(self) -> Verdict:
        """The verdict `judge` gives this result's classes now."""
        return VerifyResult.judge(self.classes)

    @property
    def framework(self) -> str | None:
        """The framework of a framework step's result; None for a native workload."""
        return self.settings.framework if self.settings is not None else None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"classes": [c.to_json() for c in self.classes],
                               "transitions": [t.to_json() for t in self.transitions]}
        if self.timings_s:
            doc["timings_s"] = dict(self.timings_s)
        if self.settings is not None:
            doc["settings"] = self.settings.to_json()
        return doc

    @classmethod
    def from_json(cls, results: Mapping[str, Any],
                  verdict: Mapping[str, Any] | None = None) -> VerifyResult:
        classes = tuple(class_from_json(c) for c in results["classes"])
        settings = results.get("settings")
        return cls(classes, tuple(Transition.from_json(t) for t in results.get("transitions", ())),
                   dict(results.get("timings_s") or {}),
                   VerifySettings.from_json(settings) if settings else None,
                   verdict=Verdict.from_json(verdict) if verdict is not None
                   else cls.judge(classes))


def _failures(failed: Sequence[ClassResult]) -> list[str]:
    """Each failed class's reasons, led by its class; a class failing with the cause of an
    earlier one is counted on one line after that one's reasons instead."""
    lines: list[str | Cause] = []  # a Cause: where that cause's count line goes
    same: dict[Cause, list[int]] = {}
    for c in failed:
        cause = c.one_cause
        if cause is not None and cause in same:
            same[cause].append(c.capacity)
            continue
        lines += [f"class {c.capacity:,}: {why}" for why in c.reasons]
        if cause is not None:
            same[cause] = []
            lines.append(cause)
    out: list[str] = []
    for line in lines:
        if isinstance(line, Cause):
            more = same[line]
            if more:
                shown = ", ".join(f"{x:,}" for x in more[:8]) + (", ..." if len(more) > 8
                                                                 else "")
                out.append(f"{len(more)} more class(es) fail the same way ({line.label}): "
                           f"{shown}")
        else:
            out.append(line)
    return out
