"""Typed results of bench: per size, the three quantities for stream and graph launch, each a
Timing that says how its sampling ended (or Unavailable, with why); up-front costs; the sweep
fit. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from graphcert.cert.results.figures import (
    QUANTITIES,
    SIDES,
    Ended,
    Interval,
    Unavailable,
    WayTimings,
)
from graphcert.cert.results.measure import (
    Context,
    HotTimings,
    PlacementContexts,
    Placements,
    Telemetry,
    placements_from_json,
    placements_to_json,
)
from graphcert.cert.results.verdict import Verdict
from graphcert.jsontypes import (
    Doc,
    JSONObject,
    JSONValue,
    as_bool,
    as_doc,
    as_docs,
    as_int,
    as_json_doc,
    as_number,
    as_opt_doc,
    as_opt_int,
    as_opt_number,
    as_opt_str,
    as_str,
)


@dataclass(frozen=True)
class Upfront:
    """What the graph costs before its first useful launch, in seconds (None: not measured)."""

    capture_s: float | None
    instantiate_s: float | None
    upload_s: float | None
    first_launch_s: float | None = None
    exec_update_s: float | None = None
    set_params_s: float | None = None

    @property
    def setup_s(self) -> float:
        """Capture + instantiate + upload: what the break-even count pays back."""
        return sum(v or 0.0 for v in (self.capture_s, self.instantiate_s, self.upload_s))

    def to_json(self) -> JSONObject:
        return {"capture_s": self.capture_s, "instantiate_s": self.instantiate_s,
                "upload_s": self.upload_s, "first_launch_s": self.first_launch_s,
                "exec_update_s": self.exec_update_s, "set_params_s": self.set_params_s}

    @classmethod
    def from_json(cls, doc: Doc) -> Upfront:
        return cls(*(as_opt_number(doc, k) for k in ("capture_s", "instantiate_s", "upload_s",
                                          "first_launch_s", "exec_update_s", "set_params_s")))


@dataclass(frozen=True)
class SizeResult:
    """Everything bench measured for one workload at one size."""

    n: int
    capacity: int
    stream: WayTimings
    graph: WayTimings
    speedup: Mapping[str, Interval | None]
    upfront: Upfront
    break_even_launches: float | None
    node_count: int
    throttled: bool
    clock_mhz: Mapping[str, float] | None = None  # before / after; absent in old certificates
    stream_path: str | None = None  # prepacked | record
    stream_ops: int | None = None
    stream_host_per_op_s: float | None = None
    # A bare cuLaunchKernel loop of as many launches per sample, timed alternately with the
    # stream path's host figure: the floor its host cost per launch is compared with.
    bare_host_per_op_s: float | None = None
    # The cold figures above are medians over these buffer placements (None: one placement,
    # recorded before graphcert measured several).
    placements: Placements | None = None
    hot: HotTimings | None = None  # None: not measured (older certificates)
    # The primary contexts the placements ran in (None: one, recorded before bench said).
    contexts: PlacementContexts | None = None

    def way(self, side: str) -> WayTimings:
        return self.stream if side == "stream" else self.graph

    def to_json(self) -> JSONObject:
        doc: JSONObject = {
            "n": self.n, "capacity": self.capacity, "stream": self.stream.to_json(),
            "graph": self.graph.to_json(),
            "speedup": {q: (iv.to_json() if iv else None) for q, iv in self.speedup.items()},
            "upfront": self.upfront.to_json(), "break_even_launches": self.break_even_launches,
            "node_count": self.node_count, "throttled": self.throttled}
        clock: JSONObject | None = None if self.clock_mhz is None else dict(self.clock_mhz)
        extra: JSONObject = {
            "clock_mhz": clock, "stream_path": self.stream_path, "stream_ops": self.stream_ops,
            "stream_host_per_op_s": self.stream_host_per_op_s,
            "bare_host_per_op_s": self.bare_host_per_op_s,
            "placements": placements_to_json(self.placements)
            if self.placements is not None else None,
            "hot": self.hot.to_json() if self.hot is not None else None,
            "contexts": self.contexts.to_json() if self.contexts is not None else None}
        doc.update({k: v for k, v in extra.items() if v is not None})
        return doc

    @classmethod
    def from_json(cls, doc: Doc) -> SizeResult:
        sp = as_doc(doc, "speedup")
        speedup = {q: (Interval.from_json(as_doc(sp, q)) if sp[q] is not None else None)
                   for q in sp}
        clock = as_opt_doc(doc, "clock_mhz")
        return cls(as_int(doc, "n"), as_int(doc, "capacity"),
                   WayTimings.from_json(as_doc(doc, "stream")),
                   WayTimings.from_json(as_doc(doc, "graph")), speedup,
                   Upfront.from_json(as_doc(doc, "upfront")),
                   as_opt_number(doc, "break_even_launches"), as_int(doc, "node_count"),
                   as_bool(doc, "throttled"),
                   None if clock is None else {k: as_number(clock, k) for k in clock},
                   as_opt_str(doc, "stream_path"), as_opt_int(doc, "stream_ops"),
                   as_opt_number(doc, "stream_host_per_op_s"),
                   as_opt_number(doc, "bare_host_per_op_s"),
                   placements_from_json(as_doc(doc, "placements"))
                   if doc.get("placements") else None,
                   HotTimings.from_json(as_doc(doc, "hot")) if doc.get("hot") else None,
                   PlacementContexts.from_json(as_doc(doc, "contexts"))
                   if doc.get("contexts") else None)


@dataclass(frozen=True)
class BenchResult:
    """bench of one workload over its sizes, with the verdict `judge` gives them (no
    default: a result is made with its verdict)."""

    kind: ClassVar[str] = "bench"

    sizes: tuple[SizeResult, ...]
    clock: Mapping[str, float | None] = field(default_factory=dict)  # before_mhz / after_mhz
    settings: Mapping[str, JSONValue] = field(default_factory=dict)
    bare_launch_s: float | None = None
    verdict: Verdict = field(kw_only=True)
    context: Context | None = None  # None: recorded before graphcert said (settled then)
    telemetry: Telemetry | None = None
    # With --context both: the same run in the other driver state, reported apart.
    other_context: BenchResult | None = None
    # Where the SM clock was not read (a framework step's bench): both clock figures are None.
    clock_unavailable: Unavailable | None = None
    wall_s: float | None = None  # the run's wall time (None: recorded before it was kept)

    @staticmethod
    def judge(sizes: Sequence[SizeResult], *, clock_unavailable: Unavailable | None,
              other_context: BenchResult | None) -> Verdict:
        """The verdict of bench, the one rule run/, the commands and the gate use. A throttled
        GPU fails the measurement (its figures mix two clock rates); a size whose SM clock was
        not read makes it incomplete (throttling was not checked), unless the run says why
        the clock is never read there (`clock_unavailable`: a framework step); with
        `other_context`, the fresh-context run beside it counts too (judged by this rule)."""
        failures = [f"n={s.n:,}: SM clock dropped from {s.clock_mhz['before']:.0f} to "
                    f"{s.clock_mhz['after']:.0f} MHz (throttled)" if s.clock_mhz else
                    f"n={s.n:,}: throttled" for s in sizes if s.throttled]
        missing = [f"n={s.n:,}: the SM clock could not be read (clock64 over %globaltimer "
                   f"gave no time), so throttling was not checked" for s in sizes
                   if s.clock_mhz is None and clock_unavailable is None]
        verdict = Verdict.of(failures, missing)
        if other_context is None:
            return verdict
        return verdict.combined(other_context.rejudged(), "fresh context: ")

    def rejudged(self) -> Verdict:
        """The verdict `judge` gives this result's own figures now."""
        return BenchResult.judge(self.sizes, clock_unavailable=self.clock_unavailable,
                                 other_context=self.other_context)

    @property
    def framework(self) -> str | None:
        """The framework of a framework step's bench (its settings name it); else None."""
        framework = self.settings.get("framework")
        return str(framework) if framework else None

    def timeouts(self, quantity: str | None = None) -> list[str]:
        """Timings whose sampling ended on its timeout (their target not reached)."""
        return [f"n={s.n} {side} {q}" for s in self.sizes for side in SIDES
                for q in QUANTITIES if quantity in (None, q)
                for t in [s.way(side).get(q)] if t is not None and t.ended is Ended.TIMEOUT]

    def to_json(self) -> JSONObject:
        clock: JSONObject = dict(self.clock)
        if self.clock_unavailable is not None:
            clock = {"before_mhz": None, "after_mhz": None,
                     "unavailable_reason": self.clock_unavailable.reason}
        doc: JSONObject = {"sizes": [s.to_json() for s in self.sizes],
                               "clock": clock, "settings": dict(self.settings)}
        if self.bare_launch_s is not None:
            doc["bare_launch_s"] = self.bare_launch_s
        if self.wall_s is not None:
            doc["wall_s"] = self.wall_s
        if self.context is not None:
            doc["context"] = self.context.value
        if self.telemetry is not None:
            doc["telemetry"] = self.telemetry.to_json()
        if self.other_context is not None:
            doc["other_context"] = {**self.other_context.to_json(),
                                    "verdict": self.other_context.verdict.to_json()}
        return doc

    @classmethod
    def from_json(cls, results: Doc, verdict: Doc | None = None) -> BenchResult:
        sizes = tuple(SizeResult.from_json(s) for s in as_docs(results, "sizes"))
        other = as_doc(results, "other_context") if results.get("other_context") else None
        read = as_doc(results, "clock") if results.get("clock") else {}
        reason = as_opt_str(read, "unavailable_reason")
        clock = {k: as_opt_number(read, k) for k in read if k != "unavailable_reason"}
        other_result = cls.from_json(other, as_opt_doc(other, "verdict")) if other else None
        unavailable = Unavailable(reason) if reason is not None else None
        judged = (Verdict.from_json(verdict) if verdict is not None else
                  cls.judge(sizes, clock_unavailable=unavailable, other_context=other_result))
        return cls(sizes, clock,
                   as_json_doc(results, "settings") if results.get("settings") else {},
                   as_opt_number(results, "bare_launch_s"), verdict=judged,
                   context=Context(as_str(results, "context"))
                   if results.get("context") else None,
                   telemetry=Telemetry.from_json(as_doc(results, "telemetry"))
                   if results.get("telemetry") else None,
                   other_context=other_result, clock_unavailable=unavailable,
                   wall_s=as_opt_number(results, "wall_s"))
