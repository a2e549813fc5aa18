"""Typed parts of a bench result beyond the cold figures: the spread over buffer placements
and the contexts they ran in, the hot (back to back, L2 warm) figures, the driver state, and
host-side telemetry. Pure."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from graphcert.cert.results.figures import Timing, Unavailable
from graphcert.jsontypes import (
    Doc,
    JSONObject,
    as_doc,
    as_floats,
    as_int,
    as_int_or,
    as_opt_str,
    as_str,
)


class Context(str, Enum):
    """The driver state figures were taken in (benchmarks/NOTES.md: a context that has had
    work on a second stream runs launches slower, for good)."""

    SEVERAL_STREAMS = "several_streams"  # settled by work on a second stream first (default)
    FRESH = "fresh_single_stream"  # a fresh process whose context only saw one stream

    @property
    def label(self) -> str:
        return ("several-streams state (settled)" if self is Context.SEVERAL_STREAMS else
                "fresh single-stream context (child process)")


@dataclass(frozen=True)
class PlacementSpread:
    """One quantity's median at each buffer placement (seconds) and their spread."""

    medians_s: tuple[float, ...]

    @property
    def median_s(self) -> float:
        """The median over placements: the figure bench reports."""
        return float(statistics.median(self.medians_s))

    @property
    def rel_range(self) -> float:
        """(largest - smallest) / median over placements: how much placement moved it."""
        mid = self.median_s
        return (max(self.medians_s) - min(self.medians_s)) / mid if mid > 0 else 0.0

    def to_json(self) -> JSONObject:
        return {"medians_s": list(self.medians_s), "median_s": self.median_s,
                "rel_range": self.rel_range}

    @classmethod
    def from_json(cls, doc: Doc) -> PlacementSpread:
        return cls(tuple(as_floats(doc, "medians_s")))


@dataclass(frozen=True)
class PlacementContexts:
    """How many primary contexts one size's placements were measured in: with bench's
    default each placement after the first gets a new one (as a new process would), since
    the stream path's device time moves with the context; `kept` says why the rest stayed
    in one (another user of the context in the process), None where nothing stopped it."""

    count: int
    kept: str | None = None

    def after_renewal(self, refused: str | None) -> PlacementContexts:
        """This after one more renewal: one more context, or the same with the reason."""
        return PlacementContexts(self.count + 1) if refused is None else \
            PlacementContexts(self.count, refused)

    def to_json(self) -> JSONObject:
        return {"count": self.count, "kept": self.kept}

    @classmethod
    def from_json(cls, doc: Doc) -> PlacementContexts:
        return cls(as_int(doc, "count"), as_opt_str(doc, "kept"))


# side -> quantity -> spread; a quantity unavailable at some placement is left out.
Placements = Mapping[str, Mapping[str, PlacementSpread]]


def placements_to_json(p: Placements) -> JSONObject:
    return {side: {q: s.to_json() for q, s in per.items()} for side, per in p.items()}


def placements_from_json(doc: Doc) -> dict[str, dict[str, PlacementSpread]]:
    out: dict[str, dict[str, PlacementSpread]] = {}
    for side in doc:
        per = as_doc(doc, side)
        out[side] = {q: PlacementSpread.from_json(as_doc(per, q)) for q in per}
    return out


@dataclass(frozen=True)
class HotTimings:
    """Device time per launch with launches back to back and L2 warm, as a serving loop
    replays (nvbench's batch measurement): events around a batch of `batch[side]` launches
    queued behind one blocking kernel, divided by the batch. Never mixed with the cold
    figures (L2 cleared, one sample per hold)."""

    stream: Timing | Unavailable
    graph: Timing | Unavailable
    batch: Mapping[str, int]

    def get(self, side: str) -> Timing | None:
        value = self.stream if side == "stream" else self.graph
        return value if isinstance(value, Timing) else None

    def to_json(self) -> JSONObject:
        def one(t: Timing | Unavailable) -> JSONObject:
            return t.to_json() if isinstance(t, Timing) else {"unavailable": t.reason}

        return {"stream": one(self.stream), "graph": one(self.graph), "batch": dict(self.batch)}

    @classmethod
    def from_json(cls, doc: Doc) -> HotTimings:
        from graphcert.cert.results.figures import Timing, Unavailable

        def one(d: Doc) -> Timing | Unavailable:
            return Unavailable(as_str(d, "unavailable")) if "unavailable" in d else \
                Timing.from_json(d)

        batch = as_doc(doc, "batch")
        return cls(one(as_doc(doc, "stream")), one(as_doc(doc, "graph")),
                   {k: as_int(batch, k) for k in batch})


@dataclass(frozen=True)
class Telemetry:
    """Host-side work over one bench run, counted in graphcert's own wrappers: stream, event
    and context synchronisations, and copies between host and device. Work a workload does
    through other libraries, and copies inside graph replays, are not seen."""

    syncs: int
    htod_bytes: int
    dtoh_bytes: int
    htod_copies: int = 0
    dtoh_copies: int = 0

    def to_json(self) -> JSONObject:
        return {"syncs": self.syncs, "htod_bytes": self.htod_bytes,
                "dtoh_bytes": self.dtoh_bytes, "htod_copies": self.htod_copies,
                "dtoh_copies": self.dtoh_copies}

    @classmethod
    def from_json(cls, doc: Doc) -> Telemetry:
        return cls(as_int(doc, "syncs"), as_int(doc, "htod_bytes"), as_int(doc, "dtoh_bytes"),
                   as_int_or(doc, "htod_copies", 0), as_int_or(doc, "dtoh_copies", 0))
