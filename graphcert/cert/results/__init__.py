"""Typed results of verify and bench, shared by run (which makes them), cert (which writes and
compares them), gate (which judges them) and render (which draws them). Pure: no CUDA, no numpy.

Each value is frozen; `to_json` writes the certificate's `results` shape, `from_json` reads it
back (tolerating the optional fields that older certificates and synthetic tests lack). A thing
that did not happen is a value with a reason: `SkippedClass`, `Unavailable`.
"""

from graphcert.cert.results.bench import (
    QUANTITIES,
    SIDES,
    BenchResult,
    Ended,
    Interval,
    SizeResult,
    Timing,
    Unavailable,
    Upfront,
    WayTimings,
)
from graphcert.cert.results.capture import CaptureResult
from graphcert.cert.results.causes import Cause
from graphcert.cert.results.measure import (
    Context,
    HotTimings,
    PlacementContexts,
    PlacementSpread,
    Telemetry,
)
from graphcert.cert.results.steps import StepBucket, cache_key
from graphcert.cert.results.sweep import LineFit, SweepFit
from graphcert.cert.results.verdict import Status, Verdict
from graphcert.cert.results.verify import (
    AnyClass,
    ClassResult,
    SampleResult,
    SkippedClass,
    Transition,
    UpdateOutcome,
    VerifyResult,
    VerifySettings,
    class_from_json,
)

__all__ = [
    "QUANTITIES", "SIDES", "AnyClass", "BenchResult", "CaptureResult", "Cause", "ClassResult",
    "Context",
    "Ended", "HotTimings", "PlacementContexts", "PlacementSpread", "Telemetry",
    "Interval", "LineFit", "SampleResult", "SizeResult", "SkippedClass", "Status",
    "StepBucket", "SweepFit",
    "Timing", "Transition", "Unavailable", "UpdateOutcome", "Upfront", "Verdict",
    "VerifyResult", "VerifySettings", "WayTimings", "cache_key", "class_from_json",
]
