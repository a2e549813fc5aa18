"""Synthetic span-mode profile results (graphcert profile --span; nothing here came from a
GPU): ReplaySpan figures made from round made-up replay times, wrapped in ProfiledClass and
ProfileResult as the run makes them."""

from __future__ import annotations

from graphcert.kinds.profile.result import ProfiledClass, ProfileResult
from graphcert.kinds.profile.span import SPAN_MODE, ReplaySpan
from tests._certfactory import synthetic_hash

SYNTHETIC_SPAN_NS = 10_000.0  # a replay's synthetic span
SPAN_REPLAYS = 21


def synthetic_span(scale: float = 1.0, *, jitter: float = 10.0, distortion: float = 1.002,
                   records: int | None = None, dropped: int = 0,
                   replays: int = SPAN_REPLAYS) -> ReplaySpan:
    """Spans of SYNTHETIC_SPAN_NS * scale +- jitter (a fixed pattern), untraced held replays
    of the span plus 2 us of launch, traced ones `distortion` times those."""
    spans = [SYNTHETIC_SPAN_NS * scale + (r % 3 - 1) * jitter for r in range(replays)]
    untraced = [s + 2_000.0 for s in spans]
    traced = [u * distortion for u in untraced]
    kept = spans[:records] if records is not None else spans
    return ReplaySpan.of(kept, traced, untraced, replays, dropped)


def synthetic_span_class(label: str = "n=256", span: ReplaySpan | None = None, *,
                         topology: str = "fork", reason: str | None = None) -> ProfiledClass:
    return ProfiledClass(label, 256, synthetic_hash(f"topology {topology}"), None, None,
                         reason, span=span if span is not None or reason else synthetic_span())


def synthetic_span_result(*classes: ProfiledClass) -> ProfileResult:
    return ProfileResult("scan", SPAN_REPLAYS, classes or (synthetic_span_class(),), 130100,
                         flush_l2=True, mode=SPAN_MODE)
