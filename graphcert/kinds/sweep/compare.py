"""Sweep certificates are not diffed: their runs' bench certificates are (the sweep names
them). Pure."""

from __future__ import annotations

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import ResultsDiff
from graphcert.errors import GraphcertError


def diff_results(a: Certificate, b: Certificate, *, min_noise: float) -> ResultsDiff:
    """Refused, with where to look instead."""
    raise GraphcertError("sweep certificates are not diffed",
                         hint="diff the bench certificates of their runs (the sweep "
                              "certificate names them)")
