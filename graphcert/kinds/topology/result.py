"""Typed results of verify: classes, samples, transitions, with the verdict. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from graphcert.cert.results.verdict import Verdict
from graphcert.jsontypes import (
    Doc,
    JSONObject,
    as_bool,
    as_doc,
    as_docs,
    as_int,
    as_json_doc,
    as_number,
    as_numbers,
    as_opt_doc,
    as_opt_int,
    as_opt_number,
    as_opt_str,
    as_str,
)
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

    def to_json(self) -> JSONObject:
        return {"result": self.result, "failing_node": self.failing_node, "reason": self.reason}

    @classmethod
    def from_json(cls, doc: Doc) -> UpdateOutcome:
        return cls(as_str(doc, "result"), as_opt_int(doc, "failing_node"),
                   as_opt_str(doc, "reason"))


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

    def to_json(self) -> JSONObject:
        return {"n": self.n, "topology_equal": self.topology_equal,
                "shape_equal": self.shape_equal,
                "update": self.update.to_json() if self.update else None,
                "output_equal": self.output_equal,
                "param_update_output_equal": self.param_update_output_equal,
                "node_count_matches_prediction": self.node_count_matches_prediction,
                "error": self.error, **_cause_json(self.cause)}

    @classmethod
    def from_json(cls, doc: Doc) -> SampleResult:
        topology, shape, output, param_update, node_count = (
            _opt_bool(doc, c) for c in cls.CHECKS)
        return cls(as_int(doc, "n"), topology, shape,
                   UpdateOutcome.from_json(as_doc(doc, "update")) if doc.get("update") else None,
                   output, param_update, node_count, as_opt_str(doc, "error"), _cause_of(doc))


def _opt_bool(doc: Doc, key: str) -> bool | None:
    """A check's answer: true, false, or null (or absent) where it was not reached."""
    return None if doc.get(key) is None else as_bool(doc, key)


def _cause_json(cause: Cause | None) -> dict[str, str]:
    """`cause` where a step's class or sample failed; no key where it passed, for a
    workload, and in certificates older graphcert wrote (which then read back exactly)."""
    return {"cause": cause.value} if cause is not None else {}


def _cause_of(doc: Doc) -> Cause | None:
    value = as_opt_str(doc, "cause")
    return Cause(value) if value is not None else None


def _ints(doc: Doc, key: str) -> dict[str, int]:
    """doc[key] as integers by name (nodes of each kind, a padding waste's min and max);
    empty where it is null or absent."""
    ints = as_opt_doc(doc, key)
    return {} if ints is None else {k: as_int(ints, k) for k in ints}


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
    embedded_snapshot: JSONObject | None = field(default=None, compare=False, repr=False)
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

    def to_json(self) -> JSONObject:
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

    def to_json(self) -> JSONObject:
        return {"capacity": self.capacity, "status": self.status, "reason": self.reason,
                "topology_hash": None, "shape_hash": None, "node_count": None, "counts": {},
                "predicted": dict(self.predicted) if self.predicted is not None else None,
                "padding_waste": {}, "samples": []}


AnyClass = ClassResult | SkippedClass


def class_from_json(doc: Doc) -> AnyClass:
    """A class row of a topology certificate as its typed value."""
    status = as_str(doc, "status")
    reason = as_opt_str(doc, "reason")
    predicted = None if doc.get("predicted") is None else _ints(doc, "predicted")
    if status == "skipped":
        return SkippedClass(as_int(doc, "capacity"), reason or "skipped", predicted)
    return ClassResult(
        as_int(doc, "capacity"), status == "pass", (reason,) if reason else (),
        as_opt_str(doc, "topology_hash"), as_opt_str(doc, "shape_hash"),
        as_opt_int(doc, "node_count"),
        _ints(doc, "counts"), predicted, _ints(doc, "padding_waste"),
        tuple(SampleResult.from_json(s) for s in (as_docs(doc, "samples")
                                                  if "samples" in doc else ())),
        embedded_snapshot=as_json_doc(doc, "snapshot") if doc.get("snapshot") is not None
        else None,
        bucket=StepBucket.from_json(as_doc(doc, "bucket")) if doc.get("bucket") else None,
        cause=_cause_of(doc))


@dataclass(frozen=True)
class Transition:
    """What changes from one verified class to the next."""

    frm: int
    to: int
    change: str  # parameters only | launch shape | topology

    def to_json(self) -> JSONObject:
        return {"from": self.frm, "to": self.to, "change": self.change}

    @classmethod
    def from_json(cls, doc: Doc) -> Transition:
        return cls(as_int(doc, "from"), as_int(doc, "to"), as_str(doc, "change"))


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

    def to_json(self) -> JSONObject:
        doc: JSONObject = {"samples": self.samples, "seed": self.seed, "mode": self.mode,
                           "classes": self.classes}
        pad = self.pad_value
        step: JSONObject = {"framework": self.framework, "rtol": self.rtol, "atol": self.atol,
                            "pad_value": list(pad) if isinstance(pad, tuple) else pad}
        doc.update({k: v for k, v in step.items() if v is not None})
        return doc

    @classmethod
    def from_json(cls, doc: Doc) -> VerifySettings:
        # Tolerances and pad values are kept as the numbers they are (an integer pad value
        # stays one), so they are written back as they were read.
        pad: float | tuple[float, ...] | None = (
            tuple(as_numbers(doc, "pad_value")) if isinstance(doc.get("pad_value"), list)
            else as_opt_number(doc, "pad_value"))
        return cls(as_int(doc, "samples"), as_int(doc, "seed"), as_str(doc, "mode"),
                   as_str(doc, "classes"), as_opt_str(doc, "framework"),
                   as_opt_number(doc, "rtol"), as_opt_number(doc, "atol"), pad)


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

    def to_json(self) -> JSONObject:
        doc: JSONObject = {"classes": [c.to_json() for c in self.classes],
                           "transitions": [t.to_json() for t in self.transitions]}
        if self.timings_s:
            timings: JSONObject = dict(self.timings_s)
            doc["timings_s"] = timings
        if self.settings is not None:
            doc["settings"] = self.settings.to_json()
        return doc

    @classmethod
    def from_json(cls, results: Doc, verdict: Doc | None = None) -> VerifyResult:
        classes = tuple(class_from_json(c) for c in as_docs(results, "classes"))
        transitions = as_docs(results, "transitions") if "transitions" in results else ()
        timings = as_doc(results, "timings_s") if results.get("timings_s") else {}
        return cls(classes, tuple(Transition.from_json(t) for t in transitions),
                   {k: as_number(timings, k) for k in timings},
                   VerifySettings.from_json(as_doc(results, "settings"))
                   if results.get("settings") else None,
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
