"""The certificate kinds graphcert knows, in the order they are shown, each declared once in
its own folder (graphcert/kinds/<kind>/). The store, the gate, show, diff, report and the
schema export loop over these; nothing else branches on a kind's name. Pure.

A declaration is read when first asked for: it imports only graphcert.cert.kind, so asking
costs a module of a few lines, and a kind's heavier parts load only where they are used.
"""

from __future__ import annotations

import importlib
from functools import cache

from graphcert.cert.kind import KindSpec

KIND_NAMES: tuple[str, ...] = ("topology", "bench", "sweep", "plan", "profile", "record")


@cache
def spec(kind: str) -> KindSpec:
    """The declaration of `kind` (LookupError for a kind graphcert does not know)."""
    if kind not in KIND_NAMES:
        raise LookupError(f"no certificate kind {kind!r}")
    declared = importlib.import_module(f"graphcert.kinds.{kind}").KIND
    if not isinstance(declared, KindSpec) or declared.name != kind:
        raise TypeError(f"graphcert.kinds.{kind}.KIND does not declare the kind {kind!r}")
    return declared


def specs() -> tuple[KindSpec, ...]:
    """Every kind's declaration, in display order."""
    return tuple(spec(k) for k in KIND_NAMES)


def known(kind: object) -> bool:
    """Whether `kind` names a certificate kind."""
    return isinstance(kind, str) and kind in KIND_NAMES
