"""What tracing costs a replay, measured in the same run as the profile: the device time of a
replay with CUPTI activity on and off, and the host's time in the launch call each way. Pure.

Since the one device time of a replay (Harness.held_sample: CUDA events around one launch
queued behind a blocking kernel, as bench's device figure) both figures are on the device
clock alone: the device never waits for the host's launch call, so a launch call that tracing
slows is reported apart (`host_*_ns`), not folded into the ratio. Certificates written before
it timed events around replays enqueued back to back (`method` BACK_TO_BACK), whose figures
hold the host's launch gaps too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphcert.jsontypes import Doc, JSONObject, as_float, as_int, as_opt_float, as_opt_str
from graphcert.profiling import Profile

HELD = "held"  # events around one launch queued behind the blocking kernel
BACK_TO_BACK = "back-to-back"  # events around replays enqueued back to back (older certificates)
METHODS = (HELD, BACK_TO_BACK)
# A node whose median is shorter than this many times the per-record cost reads more than
# 1/TOUCH_FACTOR (10%) slow under tracing, if its record carries one record's cost.
TOUCH_FACTOR = 10


@dataclass(frozen=True)
class Interval:
    """A median and its 95% interval (graphcert.orderstats), in ns."""

    median_ns: float
    low_ns: float
    high_ns: float

    @classmethod
    def of(cls, samples_ns: Sequence[float]) -> Interval:
        # numpy's import stays out of the certificate readers (graphcert show, gate)
        from graphcert.orderstats import median_interval

        low, med, high = median_interval(samples_ns)
        return cls(med, low, high)


@dataclass(frozen=True)
class ReplayOverhead:
    """Median device time of one whole replay with CUPTI activity on and off (`method`: how
    it was timed), with their intervals and the host's launch-call times where measured."""

    traced_ns: float
    untraced_ns: float
    samples: int  # replays timed each way
    # activity records CUPTI made per traced replay (None: not counted). Tracing costs about a
    # fixed device time per traced record, so the ratio depends on the graph; the extra per
    # record is the figure that carries over.
    records_per_replay: float | None = None
    method: str = BACK_TO_BACK
    traced_interval: tuple[float, float] | None = None  # (low, high) ns of traced_ns
    untraced_interval: tuple[float, float] | None = None
    host_traced_ns: float | None = None  # median host time of one launch call, traced
    host_untraced_ns: float | None = None

    @classmethod
    def held(cls, traced_ns: Sequence[float], untraced_ns: Sequence[float],
             host_traced_ns: Sequence[float], host_untraced_ns: Sequence[float],
             records_per_replay: float | None) -> ReplayOverhead:
        """The overhead of held replays from their samples (ns): medians and intervals."""
        t, u = Interval.of(traced_ns), Interval.of(untraced_ns)
        return cls(t.median_ns, u.median_ns, min(len(traced_ns), len(untraced_ns)),
                   records_per_replay, HELD, (t.low_ns, t.high_ns), (u.low_ns, u.high_ns),
                   Interval.of(host_traced_ns).median_ns, Interval.of(host_untraced_ns).median_ns)

    @property
    def ratio(self) -> float:
        """traced / untraced (1.0 where the untraced time is not positive)."""
        return self.traced_ns / self.untraced_ns if self.untraced_ns > 0 else 1.0

    @property
    def ratio_interval(self) -> tuple[float, float] | None:
        """(low, high) of the ratio from the two medians' intervals (each end against the
        other's far end: conservative); None without intervals."""
        if self.traced_interval is None or self.untraced_interval is None:
            return None
        (t_lo, t_hi), (u_lo, u_hi) = self.traced_interval, self.untraced_interval
        if u_lo <= 0 or u_hi <= 0:
            return None
        return t_lo / u_hi, t_hi / u_lo

    @property
    def extra_ns_per_record(self) -> float | None:
        """(traced - untraced) / records per replay; None where records were not counted."""
        if not self.records_per_replay:
            return None
        return (self.traced_ns - self.untraced_ns) / self.records_per_replay

    def touched(self, profile: Profile) -> tuple[int, ...]:
        """Indices of the timed nodes whose times tracing distorts by more than
        1/TOUCH_FACTOR: medians under TOUCH_FACTOR x the extra per record (none where
        tracing added nothing measurable)."""
        extra = self.extra_ns_per_record
        if extra is None or extra <= 0:
            return ()
        return tuple(n.index for n in profile.nodes if n.median_ns < TOUCH_FACTOR * extra)

    def faster_traced(self) -> bool:
        """Traced reads faster beyond the two figures' noise (the whole interval below 1;
        without intervals, any ratio below 1)."""
        span = self.ratio_interval
        return span[1] < 1 if span is not None else self.ratio < 1

    def to_json(self) -> JSONObject:
        doc: JSONObject = {"traced_ns": self.traced_ns, "untraced_ns": self.untraced_ns,
                           "samples": self.samples, "ratio": self.ratio}
        if self.method != BACK_TO_BACK:  # absent: a certificate from before held replays
            doc["method"] = self.method
        if self.records_per_replay is not None:
            doc["records_per_replay"] = self.records_per_replay
            if self.extra_ns_per_record is not None:
                doc["extra_ns_per_record"] = self.extra_ns_per_record
        for key, pair in (("traced", self.traced_interval), ("untraced", self.untraced_interval)):
            if pair is not None:
                doc[f"{key}_low_ns"], doc[f"{key}_high_ns"] = pair
        for key, value in (("host_traced_ns", self.host_traced_ns),
                           ("host_untraced_ns", self.host_untraced_ns)):
            if value is not None:
                doc[key] = value
        return doc

    @classmethod
    def from_json(cls, doc: Doc) -> ReplayOverhead:
        method = as_opt_str(doc, "method") or BACK_TO_BACK
        if method not in METHODS:
            raise ValueError(f"overhead method {method!r} is none of {', '.join(METHODS)}")
        return cls(as_float(doc, "traced_ns"), as_float(doc, "untraced_ns"),
                   as_int(doc, "samples"), as_opt_float(doc, "records_per_replay"), method,
                   _pair(doc, "traced"), _pair(doc, "untraced"),
                   as_opt_float(doc, "host_traced_ns"), as_opt_float(doc, "host_untraced_ns"))


def _pair(doc: Doc, key: str) -> tuple[float, float] | None:
    low, high = as_opt_float(doc, f"{key}_low_ns"), as_opt_float(doc, f"{key}_high_ns")
    if low is None or high is None:
        if (low is None) != (high is None):
            raise ValueError(f"overhead has one of {key}_low_ns and {key}_high_ns only")
        return None
    return low, high
