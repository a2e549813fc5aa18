"""The plan result (issue 35): the bucket list a plan chose from measured cost curves and a
traffic mix, with the figures it used and the lists it was compared with. Written as a `plan`
certificate the gate reads (`max_plan_regret`). Pure: no numpy, no CUDA (graphcert.plan's
optimiser, which needs numpy, is named for its type only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, ClassVar

from graphcert.cert.results.verdict import Verdict
from graphcert.errors import InputError
from graphcert.jsontypes import (
    Doc,
    JSONObject,
    as_bool,
    as_doc,
    as_docs,
    as_float,
    as_int,
    as_ints,
    as_opt_float,
    as_opt_int,
    as_opt_str,
    as_str,
    as_strs,
)
from graphcert.model.jsontext import canonical_json, sha256_text
from graphcert.plan.costs import Budgets, CostCurve, CostPoint
from graphcert.plan.evaluate import Evaluation
from graphcert.plan.traffic import Traffic

if TYPE_CHECKING:
    from graphcert.plan.optimise import Plan

# Lists within this relative time of the plan count as tied with it (graphcert.plan.optimise
# breaks ties the same way): a comparison "beats" the plan only by more than this.
TIE = 1e-9
CURRENT = "current"  # the comparison row taken as the engine's committed list by default


class PlanMethod(str, Enum):
    """How the chosen list was found (graphcert.plan.optimise.Method, by name)."""

    EXACT = "exact"  # exact dynamic programming: no list within the budgets is faster
    THINNED = "thinned"  # frontiers thinned: within the budgets, maybe not the best


def traffic_digest(traffic: Traffic) -> str:
    """sha256 (hex) of the canonical JSON of the histogram {"counts", "sizes"}: the same
    batch sizes and counts give the same digest whatever file they came from."""
    return sha256_text(canonical_json({"counts": list(traffic.counts),
                                       "sizes": list(traffic.sizes)}))


def point_to_json(p: CostPoint) -> JSONObject:
    return {"size": p.size, "replay_s": p.replay_s, "eager_s": p.eager_s,
            "capture_s": p.capture_s, "pool_bytes": p.pool_bytes, "measured": p.measured}


def point_from_json(doc: Doc) -> CostPoint:
    return CostPoint(as_int(doc, "size"), as_float(doc, "replay_s"), as_float(doc, "eager_s"),
                     as_float(doc, "capture_s"), as_int(doc, "pool_bytes"),
                     as_bool(doc, "measured"))


def budgets_to_json(b: Budgets) -> JSONObject:
    return {"max_graphs": b.max_graphs, "memory_budget": b.memory_budget,
            "capture_budget": b.capture_budget, "max_size": b.max_size}


def budgets_from_json(doc: Doc) -> Budgets:
    return Budgets(as_opt_int(doc, "max_graphs"), as_opt_int(doc, "memory_budget"),
                   as_opt_float(doc, "capture_budget"), as_opt_int(doc, "max_size"))


def row_to_json(e: Evaluation) -> JSONObject:
    return {"label": e.label, "buckets": list(e.buckets), "expected_s": e.expected_s,
            "padded_rows": e.padded_rows, "padded_fraction": e.padded_fraction,
            "eager_share": e.eager_share, "memory_bytes": e.memory_bytes,
            "capture_s": e.capture_s, "interpolated": list(e.interpolated),
            "over_budget": list(e.over_budget)}


def row_from_json(doc: Doc) -> Evaluation:
    return Evaluation(as_str(doc, "label"), tuple(as_ints(doc, "buckets")),
                      as_float(doc, "expected_s"), as_float(doc, "padded_rows"),
                      as_float(doc, "padded_fraction"), as_float(doc, "eager_share"),
                      as_int(doc, "memory_bytes"), as_float(doc, "capture_s"),
                      tuple(as_ints(doc, "interpolated")), tuple(as_strs(doc, "over_budget")))


def traffic_from_json(doc: Doc) -> Traffic:
    return Traffic(tuple(as_ints(doc, "sizes")), tuple(as_ints(doc, "counts")),
                   as_str(doc, "source") if "source" in doc else "traffic")


@dataclass(frozen=True)
class PlanResult:
    """A plan as certified: the cost curve it used, the traffic (and its digest), the
    budgets, the chosen list and the comparison rows, all evaluated on the same curve."""

    kind: ClassVar[str] = "plan"

    curve: CostCurve  # the candidate sizes' costs (measured, or interpolated and marked so)
    traffic: Traffic
    budgets: Budgets
    candidates: tuple[int, ...]  # the sizes the search considered
    method: PlanMethod
    why: str  # which method, and why (graphcert.plan.optimise's account)
    chosen: Evaluation  # the plan's list and its figures (label "plan")
    comparisons: tuple[Evaluation, ...] = ()  # presets and users' lists, same curve
    lower_bound_s: float | None = None  # thinned: no list within the budgets beats this
    current: str | None = None  # the comparison row that is the engine's committed list
    tolerance: float = 0.0  # lists within this of the best counted as tied (fewest graphs won)
    verdict: Verdict = field(kw_only=True)  # no default: made with the verdict `judge` gives

    @property
    def traffic_digest(self) -> str:
        return traffic_digest(self.traffic)

    @property
    def current_row(self) -> Evaluation | None:
        """The committed list's row: the one `current` names, else a row labelled
        "current"; None when there is none."""
        label = self.current or CURRENT
        return next((r for r in self.comparisons if r.label == label), None)

    def regret(self, row: Evaluation) -> float:
        """How much slower per step `row` is than the plan (0.05: 5% slower)."""
        best = self.chosen.expected_s
        return row.expected_s / best - 1 if best > 0 else 0.0

    @staticmethod
    def judge(chosen: Evaluation, comparisons: Sequence[Evaluation],
              tolerance: float = 0.0) -> Verdict:
        """The verdict of a plan, the one rule the writer and the gate use: it fails when its
        own list breaks a budget, or when a compared list that keeps the budgets is faster
        per step by more than the plan's tolerance (the plan is then not the best the curve
        allows); else it passes."""
        failures = [f"the plan's list breaks its budgets: {'; '.join(chosen.over_budget)}"
                    ] if chosen.over_budget else []
        for row in comparisons:
            if row.fits and row.expected_s < chosen.expected_s * (1 - max(TIE, tolerance)):
                failures.append(f"{row.label} keeps the budgets and is faster per step "
                                f"({row.expected_s:.6g} s against the plan's "
                                f"{chosen.expected_s:.6g} s)")
        return Verdict.of(failures)

    @property
    def framework(self) -> str | None:
        """None: a plan certificate's method is the same whatever made the graphs."""
        return None

    def rejudged(self) -> Verdict:
        return PlanResult.judge(self.chosen, self.comparisons, self.tolerance)

    def to_json(self) -> JSONObject:
        doc: JSONObject = {
            "traffic": {"digest": self.traffic_digest, "source": self.traffic.source,
                        "sizes": list(self.traffic.sizes),
                        "counts": list(self.traffic.counts)},
            "curve": [point_to_json(p) for p in self.curve.points],
            "budgets": budgets_to_json(self.budgets),
            "candidates": list(self.candidates),
            "method": self.method.value, "why": self.why,
            "lower_bound_s": self.lower_bound_s,
            "chosen": row_to_json(self.chosen),
            "comparisons": [row_to_json(r) for r in self.comparisons],
            "current": self.current}
        if self.tolerance:
            doc["tolerance"] = self.tolerance
        return doc

    @classmethod
    def from_json(cls, doc: Doc, verdict: Doc | None = None) -> PlanResult:
        chosen = row_from_json(as_doc(doc, "chosen"))
        comparisons = tuple(row_from_json(r) for r in (as_docs(doc, "comparisons")
                                                       if doc.get("comparisons") else ()))
        tolerance = as_float(doc, "tolerance") if "tolerance" in doc else 0.0
        return cls(CostCurve(tuple(point_from_json(p) for p in as_docs(doc, "curve"))),
                   traffic_from_json(as_doc(doc, "traffic")),
                   budgets_from_json(as_doc(doc, "budgets")), tuple(as_ints(doc, "candidates")),
                   PlanMethod(as_str(doc, "method")), as_str(doc, "why"), chosen, comparisons,
                   as_opt_float(doc, "lower_bound_s"), as_opt_str(doc, "current"), tolerance,
                   verdict=Verdict.from_json(verdict) if verdict is not None
                   else cls.judge(chosen, comparisons, tolerance))


def plan_result(plan: Plan, curve: CostCurve, traffic: Traffic,
                comparisons: Sequence[Evaluation] = (), *,
                current: str | None = None) -> PlanResult:
    """The certified value of a plan from graphcert.plan.optimise.choose, with the lists it
    is compared with (graphcert.plan.evaluate.evaluate on the same curve, traffic and
    budgets). `current` names the comparison row that is the engine's committed list."""
    labels = [r.label for r in comparisons]
    if len(set(labels)) != len(labels) or "plan" in labels:
        raise InputError(f"the compared lists' labels repeat or say 'plan': {labels}",
                         hint="give each compared list once, under its own name")
    if current is not None and current not in labels:
        raise InputError(f"the current list {current!r} is not one of the compared lists",
                         hint="compare the engine's current list too")
    return PlanResult(curve, traffic, plan.budgets, plan.candidates,
                      PlanMethod.EXACT if plan.exact else PlanMethod.THINNED, plan.why,
                      plan.chosen, tuple(comparisons), plan.lower_bound_s, current,
                      plan.tolerance,
                      verdict=PlanResult.judge(plan.chosen, comparisons, plan.tolerance))
