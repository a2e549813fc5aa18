"""Typed figures shared by the certificate kinds and the statistics that make them: how a
sampling loop ended, a timing summary, a figure that could not be measured, one way of
launching timed three ways, an interval, a straight-line fit. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from graphcert.jsontypes import (
    Doc,
    JSONObject,
    as_doc,
    as_float,
    as_int,
    as_opt_doc,
    as_opt_float,
    as_opt_number,
    as_opt_str,
)

# The three timed quantities, never mixed, and the two ways of launching.
QUANTITIES: tuple[str, ...] = ("host_enqueue", "device", "end_to_end")
SIDES: tuple[str, ...] = ("stream", "graph")


class Ended(str, Enum):
    """How a sampling loop stopped: its precision target met (the default rule), the noise
    rule held (nvbench's, `--stopping noise`), its timeout, or a sample limit."""

    PRECISION_TARGET = "precision_target"
    NOISE_TARGET = "noise_target"
    TIMEOUT = "timeout"
    SAMPLE_CAP = "sample_cap"


@dataclass(frozen=True)
class Timing:
    """Summary of one quantity's samples, in seconds per launch; `noise` is relative, and
    so is `half_width`: the larger half of the 95% interval of the median over the median
    (None: not recorded, or too few samples to bound it)."""

    samples: int
    median_s: float
    mean_s: float
    min_s: float
    max_s: float
    rel_stddev: float
    iqr_s: float
    noise: float
    ended: Ended | None = None  # None: recorded before graphcert said how sampling ended
    half_width: float | None = None

    def to_json(self) -> JSONObject:
        doc: JSONObject = {
            "samples": self.samples, "median_s": self.median_s, "mean_s": self.mean_s,
            "min_s": self.min_s, "max_s": self.max_s, "rel_stddev": self.rel_stddev,
            "iqr_s": self.iqr_s, "noise": self.noise}
        if self.ended is not None:
            doc["ended"] = self.ended.value
        if self.half_width is not None:
            doc["half_width"] = self.half_width
        return doc

    @classmethod
    def from_json(cls, doc: Doc) -> Timing:
        ended = as_opt_str(doc, "ended")
        return cls(as_int(doc, "samples"), as_float(doc, "median_s"), as_float(doc, "mean_s"),
                   as_float(doc, "min_s"), as_float(doc, "max_s"), as_float(doc, "rel_stddev"),
                   as_float(doc, "iqr_s"), as_float(doc, "noise"),
                   Ended(ended) if ended is not None else None,
                   as_opt_float(doc, "half_width"))


@dataclass(frozen=True)
class Unavailable:
    """A figure that could not be measured, and why."""

    reason: str


@dataclass(frozen=True)
class WayTimings:
    """One way of launching (stream or graph), timed three ways that are never mixed."""

    host_enqueue: Timing
    device: Timing | Unavailable
    end_to_end: Timing

    def get(self, quantity: str) -> Timing | None:
        """The timing of `quantity`, None where it is unavailable."""
        value = getattr(self, quantity)
        return value if isinstance(value, Timing) else None

    def to_json(self) -> JSONObject:
        dev = self.device
        return {"device_unavailable_reason": dev.reason if isinstance(dev, Unavailable) else None,
                "host_enqueue": self.host_enqueue.to_json(),
                "device": dev.to_json() if isinstance(dev, Timing) else None,
                "end_to_end": self.end_to_end.to_json()}

    @classmethod
    def from_json(cls, doc: Doc) -> WayTimings:
        dev = as_opt_doc(doc, "device")
        device: Timing | Unavailable = (
            Timing.from_json(dev) if dev is not None else
            Unavailable(as_opt_str(doc, "device_unavailable_reason") or "not measured"))
        return cls(Timing.from_json(as_doc(doc, "host_enqueue")), device,
                   Timing.from_json(as_doc(doc, "end_to_end")))


@dataclass(frozen=True)
class Interval:
    """Graph-over-stream speedup (median ratio) and its bootstrap interval."""

    median: float
    low: float
    high: float
    confidence: float | None = None

    def to_json(self) -> JSONObject:
        doc: JSONObject = {"median": self.median, "low": self.low, "high": self.high}
        if self.confidence is not None:
            doc["confidence"] = self.confidence
        return doc

    @classmethod
    def from_json(cls, doc: Doc) -> Interval:
        return cls(as_float(doc, "median"), as_float(doc, "low"), as_float(doc, "high"),
                   as_opt_number(doc, "confidence"))


@dataclass(frozen=True)
class LineFit:
    """Least squares time = a + b * value, with R²."""

    a_s: float
    b_s: float
    r2: float

    def to_json(self) -> JSONObject:
        return {"a_s": self.a_s, "b_s": self.b_s, "r2": self.r2}

    @classmethod
    def from_json(cls, doc: Doc) -> LineFit:
        return cls(as_float(doc, "a_s"), as_float(doc, "b_s"), as_float(doc, "r2"))
