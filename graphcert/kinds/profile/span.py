"""Span mode's figures (`graphcert profile --span`): per replay of a graph, its device time
from CUPTI's GRAPH_TRACE record (one record a launch: the first node's start to the last
node's end, no per-node tracing), and the distortion of that tracing on the device clock:
the held device time of a replay traced against untraced (Harness.held_sample each way).
Pure: no CUDA, no CUPTI.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphcert.jsontypes import Doc, JSONObject, as_float, as_int
from graphcert.kinds.profile.overhead import Interval

SPAN_MODE, NODES_MODE = "span", "nodes"
MODES = (NODES_MODE, SPAN_MODE)
REPLAY_SPAN = "replay span"  # the name of a span row in a comparison (gate, diff)


@dataclass(frozen=True)
class ReplaySpan:
    """One class's replay spans (GRAPH_TRACE records, ns: median and 95% interval), how many
    replays were timed and how many records matched them, records CUPTI dropped, and the held
    device time of a replay traced and untraced (median, 95% interval)."""

    median_ns: float
    low_ns: float
    high_ns: float
    replays: int  # held replays timed each way (and traced)
    records: int  # GRAPH_TRACE records of the traced replays' executable
    traced_ns: float
    untraced_ns: float
    traced_interval: tuple[float, float]  # (low, high) ns of traced_ns
    untraced_interval: tuple[float, float]
    dropped: int = 0  # records CUPTI dropped (full buffers)

    @classmethod
    def of(cls, spans_ns: Sequence[float], traced_ns: Sequence[float],
           untraced_ns: Sequence[float], replays: int, dropped: int = 0) -> ReplaySpan:
        """The figures of one class's samples (ns): each median with its interval."""
        s, t, u = Interval.of(spans_ns), Interval.of(traced_ns), Interval.of(untraced_ns)
        return cls(s.median_ns, s.low_ns, s.high_ns, replays, len(spans_ns), t.median_ns,
                   u.median_ns, (t.low_ns, t.high_ns), (u.low_ns, u.high_ns), dropped)

    @property
    def distortion(self) -> float:
        """traced held / untraced held device time (1.0 where untraced is not positive)."""
        return self.traced_ns / self.untraced_ns if self.untraced_ns > 0 else 1.0

    @property
    def distortion_interval(self) -> tuple[float, float] | None:
        """(low, high) of the distortion, each end against the other's far end
        (conservative); None where an untraced bound is not positive."""
        (t_lo, t_hi), (u_lo, u_hi) = self.traced_interval, self.untraced_interval
        if u_lo <= 0 or u_hi <= 0:
            return None
        return t_lo / u_hi, t_hi / u_lo

    def to_json(self) -> JSONObject:
        return {"median_ns": self.median_ns, "low_ns": self.low_ns, "high_ns": self.high_ns,
                "replays": self.replays, "records": self.records, "dropped": self.dropped,
                "traced_ns": self.traced_ns, "traced_low_ns": self.traced_interval[0],
                "traced_high_ns": self.traced_interval[1], "untraced_ns": self.untraced_ns,
                "untraced_low_ns": self.untraced_interval[0],
                "untraced_high_ns": self.untraced_interval[1], "distortion": self.distortion}

    @classmethod
    def from_json(cls, doc: Doc) -> ReplaySpan:
        return cls(as_float(doc, "median_ns"), as_float(doc, "low_ns"), as_float(doc, "high_ns"),
                   as_int(doc, "replays"), as_int(doc, "records"), as_float(doc, "traced_ns"),
                   as_float(doc, "untraced_ns"),
                   (as_float(doc, "traced_low_ns"), as_float(doc, "traced_high_ns")),
                   (as_float(doc, "untraced_low_ns"), as_float(doc, "untraced_high_ns")),
                   as_int(doc, "dropped"))


__all__ = ["MODES", "NODES_MODE", "REPLAY_SPAN", "SPAN_MODE", "ReplaySpan"]
