"""The profile result: per class or bucket, the device time of every node of a
replayed graph (graphcert.profiling.Profile), the tracing overhead measured beside it, and the
topology it belongs to. Written as a `profile` certificate the gate reads
(`max_node_regression`, `max_critical_path_regression`). Pure: no CUDA, no CUPTI.

The verdict (`ProfileResult.judge`):
- nothing fails here: a graph with no timed node, replays=0 or CUPTI unavailable are refused
  before a result exists (graphcert.profiling.ProfileGraph, the run side); regressions are the
  gate's, against a baseline;
- incomplete (figures exist but something was lost): records CUPTI dropped (full buffers);
  more than MAX_INCOMPLETE_FRACTION of the replays that left records lacking a node's record;
  fewer replays with records than were asked for;
- notes, never a fail (`ProfileResult.notes`): tracing overhead above OVERHEAD_NOTE (the
  figures still hold, they are only slower by that much), an overhead not measured and why
  (a graph whose launches wait on the device while CUPTI traces cannot be held behind the
  blocking kernel: its node figures are whole, its device-clock overhead is not known),
  records that joined no node, and duplicate records.

Span mode (`mode` "span", graphcert.kinds.profile.span): a class has no per-node `profile`
but a `span`; it is incomplete without one (the reason in `overhead_reason`), with fewer
GRAPH_TRACE records than replays, or records CUPTI dropped; its distortion above
OVERHEAD_NOTE is a note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from graphcert.cert.results.verdict import Verdict
from graphcert.errors import InputError
from graphcert.jsontypes import (
    Doc,
    JSONObject,
    as_docs,
    as_int,
    as_opt_doc,
    as_opt_float,
    as_opt_str,
    as_str,
)
from graphcert.kinds.profile.overhead import HELD, TOUCH_FACTOR, ReplayOverhead
from graphcert.kinds.profile.span import MODES, NODES_MODE, SPAN_MODE, ReplaySpan
from graphcert.kinds.profile.whatif import WhatIf
from graphcert.profiling import Profile

MAX_INCOMPLETE_FRACTION = 0.05  # of replays with records: more missing a node is incomplete
OVERHEAD_NOTE = 1.01  # traced / untraced replay time above this is noted


@dataclass(frozen=True)
class ProfiledClass:
    """One class or bucket's profile: the graph captured for `size`, its topology
    fingerprint, the figures and the overhead (None only with `overhead_reason`). In span
    mode `profile` is None and `span` holds the figures (None only with `overhead_reason`:
    why nothing was measured)."""

    label: str  # the class or bucket label as verify/bench print it
    size: int  # the n the graph was captured for
    topology_hash: str  # the snapshot's topology fingerprint
    profile: Profile | None
    overhead: ReplayOverhead | None
    overhead_reason: str | None = None
    # what a replay saves without each node (None: not run, with `what_if_reason`; both None:
    # a certificate from before what-if attribution)
    what_if: WhatIf | None = None
    what_if_reason: str | None = None
    span: ReplaySpan | None = None  # span mode's figures

    @property
    def span_mode(self) -> bool:
        """Profiled in span mode: replay spans, no per-node figures."""
        return self.profile is None

    def __post_init__(self) -> None:
        if self.profile is not None and self.span is not None:
            raise InputError(f"class {self.label}: both per-node figures and a replay span",
                             hint="profile a class in one mode: per node, or --span")
        if self.overhead is None and self.span is None and not self.overhead_reason:
            raise InputError(f"class {self.label}: no overhead figure and no reason why",
                             hint="measure the overhead, or say why it was not measured")

    def to_json(self) -> JSONObject:
        doc: JSONObject = {
            "label": self.label, "size": self.size, "topology_hash": self.topology_hash,
            "profile": self.profile.to_json() if self.profile is not None else None,
            "overhead": self.overhead.to_json() if self.overhead is not None else None,
            "overhead_reason": self.overhead_reason}
        # a new class has one or the other; neither: a certificate from before what-if, kept
        # as it was written
        if self.what_if is not None or self.what_if_reason is not None:
            doc["what_if"] = self.what_if.to_json() if self.what_if is not None else None
            doc["what_if_reason"] = self.what_if_reason
        if self.span is not None:  # absent: node mode, and certificates from before spans
            doc["span"] = self.span.to_json()
        return doc

    @classmethod
    def from_json(cls, doc: Doc) -> ProfiledClass:
        over, prof, span = (as_opt_doc(doc, k) for k in ("overhead", "profile", "span"))
        what_if = as_opt_doc(doc, "what_if")
        return cls(as_str(doc, "label"), as_int(doc, "size"), as_str(doc, "topology_hash"),
                   Profile.from_json(prof) if prof is not None else None,
                   ReplayOverhead.from_json(over) if over is not None else None,
                   as_opt_str(doc, "overhead_reason"),
                   WhatIf.from_json(what_if) if what_if is not None else None,
                   as_opt_str(doc, "what_if_reason"),
                   ReplaySpan.from_json(span) if span is not None else None)


@dataclass(frozen=True)
class ProfileResult:
    """`graphcert profile` of one workload over its classes; `verdict` is `judge` of the
    figures (derived, so a certificate's stored verdict is checked against it)."""

    kind: ClassVar[str] = "profile"

    workload: str  # the workload ref as bench certificates name it
    replays: int  # replays requested per class
    classes: tuple[ProfiledClass, ...]
    cupti_version: int  # cupti.get_version()
    wall_s: float | None = None  # the run's wall time
    # L2 cleared before each held replay (None: a certificate from before held replays)
    flush_l2: bool | None = None
    mode: str = NODES_MODE  # "span": `graphcert profile --span` (absent in older documents)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InputError(f"profile mode {self.mode!r} is none of {', '.join(MODES)}",
                             hint="profile per node (the default) or with --span")

    @property
    def verdict(self) -> Verdict:
        return ProfileResult.judge(self.classes, self.replays)

    @property
    def framework(self) -> str | None:
        """None: a profile certificate's method is the same whatever made the graphs."""
        return None

    def rejudged(self) -> Verdict:
        return self.verdict

    def cls(self, label: str) -> ProfiledClass | None:
        """The class labelled `label`, None where there is none."""
        return next((c for c in self.classes if c.label == label), None)

    @staticmethod
    def judge(classes: Sequence[ProfiledClass], replays: int) -> Verdict:
        """The verdict of a profile (the module's docstring says what makes it incomplete);
        the one rule the command, the certificate reader and the gate use."""
        missing: list[str] = []
        if not classes:
            missing.append("no class was profiled")
        for c in classes:
            p = c.profile
            if p is None:
                missing += _span_missing(c)
                continue
            seen = p.replays + p.incomplete_replays
            if p.dropped:
                missing.append(f"{c.label}: CUPTI dropped {p.dropped} record(s) (buffers full)")
            if seen and p.incomplete_replays > MAX_INCOMPLETE_FRACTION * seen:
                missing.append(f"{c.label}: {p.incomplete_replays} of {seen} replays lack a "
                               f"node's record (more than {MAX_INCOMPLETE_FRACTION:.0%})")
            if seen < replays:
                missing.append(f"{c.label}: {replays - seen} of {replays} replays left no "
                               f"record")
        return Verdict.of((), missing)

    @property
    def notes(self) -> tuple[str, ...]:
        """What a reader should know that is not a fail nor incomplete."""
        out: list[str] = []
        for c in self.classes:
            p = c.profile
            if p is None:
                out += _span_notes(c.label, c.span)
                continue
            if c.overhead is None:
                out.append(f"{c.label}: tracing overhead not measured: {c.overhead_reason}")
            elif c.overhead.method == HELD:
                out.extend(_held_notes(c.label, c.overhead, p))
            elif c.overhead.ratio > OVERHEAD_NOTE:
                extra = c.overhead.extra_ns_per_record
                per = f", {extra:,.0f} ns per traced record" if extra is not None else ""
                out.append(f"{c.label}: tracing overhead {c.overhead.ratio:.3f}x (above "
                           f"{OVERHEAD_NOTE}x{per}): node times may read slower than untraced")
            if p.unmatched:
                out.append(f"{c.label}: {p.unmatched} record(s) joined no node of the graph")
            if p.duplicates:
                out.append(f"{c.label}: {p.duplicates} duplicate record(s) ignored")
        return tuple(out)

    def to_json(self) -> JSONObject:
        doc: JSONObject = {"workload": self.workload, "replays": self.replays,
                               "cupti_version": self.cupti_version,
                               "classes": [c.to_json() for c in self.classes],
                               "notes": list(self.notes)}
        if self.wall_s is not None:
            doc["wall_s"] = self.wall_s
        if self.flush_l2 is not None:
            doc["flush_l2"] = self.flush_l2
        if self.mode != NODES_MODE:  # absent: per node (every certificate before span mode)
            doc["mode"] = self.mode
        return doc

    @classmethod
    def from_json(cls, results: Doc, verdict: Doc | None = None) -> ProfileResult:
        """The result a `to_json` document holds (`verdict`, the stored one, is not needed:
        the verdict is judged from the figures; evidence checks the two agree)."""
        del verdict
        try:
            return cls(as_str(results, "workload"), as_int(results, "replays"),
                       tuple(ProfiledClass.from_json(c) for c in as_docs(results, "classes")),
                       as_int(results, "cupti_version"), as_opt_float(results, "wall_s"),
                       _opt_bool(results.get("flush_l2")),
                       as_opt_str(results, "mode") or NODES_MODE)
        except KeyError as exc:
            raise InputError(f"profile results lack {exc.args[0]!r}",
                             hint="pass a document ProfileResult.to_json wrote") from None
        except (TypeError, ValueError) as exc:
            raise InputError(f"profile results have a bad value: {exc}",
                             hint="pass a document ProfileResult.to_json wrote") from None


def _span_missing(c: ProfiledClass) -> list[str]:
    """What makes a span-mode class incomplete."""
    s = c.span
    if s is None:
        return [f"{c.label}: replay span not measured ({c.overhead_reason})"]
    out = []
    if s.records < s.replays:
        out.append(f"{c.label}: {s.replays - s.records} of {s.replays} replays left no "
                   f"GRAPH_TRACE record")
    if s.dropped:
        out.append(f"{c.label}: CUPTI dropped {s.dropped} record(s) (buffers full)")
    return out


def _span_notes(label: str, s: ReplaySpan | None) -> list[str]:
    """A span-mode class's distortion above OVERHEAD_NOTE, or traced reading faster beyond
    both figures' noise."""
    if s is None:
        return []
    span = s.distortion_interval
    within = f" [{span[0]:.3f}, {span[1]:.3f}]" if span is not None else ""
    if span is not None and span[1] < 1:
        return [f"{label}: traced replays read faster than untraced ({s.distortion:.3f}x"
                f"{within} on the device clock): something other than tracing moved between "
                f"the two loops (clocks, L2, another process on the GPU); profile it again"]
    if s.distortion <= OVERHEAD_NOTE:
        return []
    return [f"{label}: GRAPH_TRACE stretched a replay {s.distortion:.3f}x{within} on the "
            f"device clock (above {OVERHEAD_NOTE}x): the spans read slower than untraced "
            f"replays by about that much"]


def _held_notes(label: str, o: ReplayOverhead, p: Profile) -> list[str]:
    """The notes of an overhead timed on the device clock alone (held launches): a stretch
    above OVERHEAD_NOTE naming the nodes it distorts most, or a traced replay that reads
    faster beyond both figures' noise."""
    low_high = o.ratio_interval
    within = f" [{low_high[0]:.3f}, {low_high[1]:.3f}]" if low_high is not None else ""
    if o.faster_traced():
        return [f"{label}: traced replays read faster than untraced ({o.ratio:.3f}x{within} on "
                f"the device clock): something other than tracing moved between the two "
                f"loops (clocks, L2, another process on the GPU); profile it again"]
    if o.ratio <= OVERHEAD_NOTE:
        return []
    extra = o.extra_ns_per_record
    per = f", {extra:+,.0f} ns per traced record" if extra is not None else ""
    touched = o.touched(p)
    which = (f"; {len(touched)} of {len(p.nodes)} timed nodes last under {TOUCH_FACTOR}x that "
             f"and read more than {1 / TOUCH_FACTOR:.0%} slow traced ({_indices(touched)})"
             if touched else "; no node lasts under "
             f"{TOUCH_FACTOR}x that: node times read within {1 / TOUCH_FACTOR:.0%} of untraced")
    return [f"{label}: tracing stretched a replay {o.ratio:.3f}x{within} on the device clock "
            f"(above {OVERHEAD_NOTE}x{per}){which}"]


def _indices(indices: Sequence[int], shown: int = 8) -> str:
    """"node 0, 3, 5 and 12 more": the first `shown` indices and how many others."""
    head = ", ".join(str(i) for i in indices[:shown])
    rest = len(indices) - shown
    return f"node {head}" + (f" and {rest:,} more" if rest > 0 else "")


def _opt_bool(value: object) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise TypeError(f"flush_l2 {value!r} is not true, false or null")
    return value


__all__ = ["MAX_INCOMPLETE_FRACTION", "OVERHEAD_NOTE", "SPAN_MODE", "ProfiledClass",
           "ProfileResult", "ReplayOverhead", "ReplaySpan"]
