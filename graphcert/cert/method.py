"""Which of graphcert's method digests a certificate carries: its kind, plus "+step" for a
framework step. Imports nothing heavy: graphcert.cert.digests (at every run's start)
and the gate both read it. Pure."""

from __future__ import annotations

from graphcert.cert.registry import spec
from graphcert.jsontypes import Doc

# A framework step's topology or bench certificate has method kind "<kind>+step": its
# method also covers graphcert's framework-step code (graphcert.cert.digests).
STEP_SUFFIX = "+step"


def method_kind(kind: str, settings: Doc | None) -> str:
    """The method kind a certificate's method digest is taken for: its kind, plus "+step"
    for a framework step's certificate of a kind that declares `steps` (its results'
    settings name the framework). The writer and the gate both derive it this way."""
    if settings and settings.get("framework") and spec(kind).steps:
        return kind + STEP_SUFFIX
    return kind

