"""Typed values every certificate kind shares, below the kinds (graphcert.kinds): the verdict,
the timing figures and statistics' results, a bench's placements, hot figures and telemetry,
and a capture's result. Pure: no CUDA, no numpy.

Each value is frozen; `to_json` writes the certificate's shape, `from_json` reads it back
(tolerating the optional fields that older certificates and synthetic tests lack). A thing
that did not happen is a value with a reason (`Unavailable`). A kind's own result type lives
in its folder, `graphcert/kinds/<kind>/result.py`.
"""

from graphcert.cert.results.capture import CaptureResult
from graphcert.cert.results.figures import Ended, Interval, LineFit, Timing, Unavailable, WayTimings
from graphcert.cert.results.measure import (
    Context,
    HotTimings,
    PlacementContexts,
    PlacementSpread,
    Telemetry,
)
from graphcert.cert.results.verdict import Status, Verdict

__all__ = [
    "CaptureResult", "Context", "Ended", "HotTimings", "Interval", "LineFit",
    "PlacementContexts", "PlacementSpread", "Status", "Telemetry", "Timing", "Unavailable",
    "Verdict", "WayTimings",
]
