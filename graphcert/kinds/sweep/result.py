"""The sweep result: per-launch cost against a swept workload option (`bench --sweep`), fitted
as a + b·value per way and quantity, with each swept run's first size kept for the plot and
the certificate each run wrote. Written as a `sweep` certificate the gate reads. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from graphcert.cert.results.figures import LineFit
from graphcert.cert.results.verdict import Verdict
from graphcert.jsontypes import (
    Doc,
    JSONObject,
    as_doc,
    as_docs,
    as_numbers,
    as_opt_str,
    as_opt_strs,
    as_str,
)
from graphcert.kinds.bench.result import BenchResult, SizeResult


@dataclass(frozen=True)
class SweepFit:
    """Per-launch cost against a swept workload option, per way and quantity."""

    kind: ClassVar[str] = "sweep"

    key: str
    values: tuple[float, ...]  # as written: an integer stays one
    fit: Mapping[str, Mapping[str, LineFit | None]]
    points: tuple[SizeResult, ...] = field(default=(), compare=False)  # for the plot
    certificates: tuple[str | None, ...] = ()  # each swept run's certificate file name
    plot: str | None = None  # the plot's file name beside the sweep certificate
    verdict: Verdict = field(kw_only=True)  # no default: made with the verdict `judge` gives

    @staticmethod
    def judge(points: Sequence[SizeResult]) -> Verdict:
        """The verdict of a sweep, the one rule run/ and the gate use: as a bench's sizes
        (BenchResult.judge), a throttled run fails it (its point mixes two clock rates) and a
        point whose SM clock was not read makes it incomplete."""
        return BenchResult.judge(points, clock_unavailable=None, other_context=None)

    def rejudged(self) -> Verdict:
        """The verdict `judge` gives this sweep's points now."""
        return SweepFit.judge(self.points)

    @property
    def framework(self) -> str | None:
        """A sweep is of a native workload's option: no framework."""
        return None

    def to_json(self) -> JSONObject:
        doc: JSONObject = {
            "key": self.key, "values": list(self.values),
            "fit": {way: {q: (f.to_json() if f else None) for q, f in per.items()}
                    for way, per in self.fit.items()}}
        if self.points:
            doc["points"] = [p.to_json() for p in self.points]
            doc["certificates"] = list(self.certificates) or [None] * len(self.points)
        if self.plot is not None:
            doc["plot"] = self.plot
        return doc

    @classmethod
    def from_json(cls, doc: Doc, verdict: Doc | None = None) -> SweepFit:
        points = tuple(SizeResult.from_json(p)
                       for p in (as_docs(doc, "points") if doc.get("points") else ()))
        fits = as_doc(doc, "fit")
        fit = {way: {q: (LineFit.from_json(as_doc(per, q)) if per[q] else None) for q in per}
               for way in fits for per in [as_doc(fits, way)]}
        certificates = as_opt_strs(doc, "certificates") if doc.get("certificates") else ()
        return cls(as_str(doc, "key"), tuple(as_numbers(doc, "values")), fit, points,
                   tuple(certificates), as_opt_str(doc, "plot"),
                   verdict=Verdict.from_json(verdict) if verdict is not None
                   else cls.judge(points))
