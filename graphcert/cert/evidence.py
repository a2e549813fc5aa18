"""A certificate's claims held against its own evidence. Pure: no numpy, no CUDA.

The schema says each field is well typed; this says the fields agree. Every verdict and
derived figure a certificate records is recomputed from the evidence beside it, the way
graphcert computed it, by the evidence module of the certificate's kind
(graphcert/kinds/<kind>/evidence.py). `contradictions` names each disagreement with both
values; `check_document` refuses a certificate that has one (exit 2), so no reader silently
takes one side of it. What every kind's check shares is here: the verdict against its
evidence, and how close two recomputed figures must be.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, cast

from graphcert.cert.kind import KindResult
from graphcert.cert.registry import spec
from graphcert.errors import InputError

REL = 1e-9  # float rounding between the way graphcert computed a figure and this
RANK = {"pass": 0, "incomplete": 1, "fail": 2}

Doc = Mapping[str, Any]


class Evidence(Protocol):
    """A kind's evidence module: the document's results and verdict as written (what a check
    of stored fields reads) and the same results as the kind's typed value, parsed once."""

    def contradictions(self, results: Doc, verdict: Doc, result: KindResult) -> list[str]: ...


def contradictions(cert: Doc, result: KindResult | None = None) -> list[str]:
    """Every way a (schema-valid) certificate's claims disagree with its evidence. `result`
    is its typed value as the store made it; without it (a test, a fuzz) it is made here, and
    a document whose results do not read as its kind's is that contradiction."""
    kind = spec(str(cert["kind"]))
    if not kind.has("evidence"):
        return []
    if result is None:
        try:
            result = kind.result_type().from_json(cert["results"], cert["verdict"])
        except InputError as exc:
            return [f"results: {exc.message}"]
    check = cast(Evidence, kind.module("evidence"))
    return check.contradictions(cert["results"], cert["verdict"], result)


def stored_status(verdict: Doc) -> str:
    """The stored status; certificates written before it existed hold only `passed`."""
    status = verdict.get("status")
    return str(status) if status is not None else "pass" if verdict["passed"] else "fail"


def verdict_contradictions(verdict: Doc, where: str,
                           evidence: Sequence[tuple[str, str]]) -> Iterator[str]:
    """`passed` against `status`, and the status against the worst the evidence shows. A
    verdict without `status` was written before graphcert judged a skipped class or an
    unread clock incomplete: only failing evidence contradicts its pass (the gate reads it
    as incomplete: graphcert.cert.certificate.judged_verdict)."""
    status = verdict.get("status")
    if status is not None and verdict["passed"] is not (status == "pass"):
        yield (f"{where}.passed is {str(verdict['passed']).lower()} but {where}.status is "
               f"{status!r}")
    if status is None:
        evidence = [e for e in evidence if e[0] == "fail"]
    stored = stored_status(verdict)
    worst = max(evidence, key=lambda e: RANK[e[0]], default=None)
    if worst is not None and RANK[worst[0]] > RANK[stored]:
        said = f"{where}.status says {stored!r}" if status is not None else \
            f"{where}.passed is true"
        yield f"{said} but {worst[1]}"




def close(a: float, b: float, rel: float = REL) -> bool:
    """Whether two figures agree to `rel` (relative), or are both zero."""
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-300


def fmt(x: float) -> str:
    """A figure as a contradiction names it."""
    return f"{x:.6g}"
