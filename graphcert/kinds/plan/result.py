"""The plan result (issue 35): the bucket list a plan chose from measured cost curves and a
traffic mix, with the figures it used and the lists it was compared with. Written as a `plan`
certificate the gate reads (`max_plan_regret`). Pure: no numpy, no CUDA (graphcert.plan's
optimiser, which needs numpy, is named for its type only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

from graphcert.cert.results.verdict import Verdict
from graphcert.errors import InputError
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


def point_to_json(p: CostPoint) -> dict[str, Any]:
    return {"size": p.size, "replay_s": p.replay_s, "eager_s": p.eager_s,
            "capture_s": p.capture_s, "pool_bytes": p.pool_bytes, "measured": p.measured}


def point_from_json(doc: Mapping[str, Any]) -> CostPoint:
    return CostPoint(int(doc["size"]), float(doc["replay_s"]), float(doc["eager_s"]),
                     float(doc["capture_s"]), int(doc["pool_bytes"]), bool(doc["measured"]))


def budgets_to_json(b: Budgets) -> dict[str, Any]:
    return {"max_graphs": b.max_graphs, "memory_budget": b.memory_budget,
            "capture_budget": b.capture_budget, "max_size": b.max_size}


def budgets_from_json(doc: Mapping[str, Any]) -> Budgets:
    cap = doc.get("capture_budget")
    return Budgets(doc.get("max_graphs"), doc.get("memory_budget"),
                   None if cap is None else float(cap), doc.get("max_size"))


def row_to_json(e: Evaluation) -> dict[str, Any]:
    return {"label": e.label, "buckets": list(e.buckets), "expected_s": e.expected_s,
            "padded_rows": e.padded_rows, "padded_fraction": e.padded_fraction,
            "eager_share": e.eager_share, "memory_bytes": e.memory_bytes,
            "capture_s": e.capture_s, "interpolated": list(e.interpolated),
            "over_budget": list(e.over_budget)}


def row_from_json(doc: Mapping[str, Any]) -> Evaluation:
    return Evaluation(str(doc["label"]), tuple(int(b) for b in doc["buckets"]),
                      float(doc["expected_s"]), float(doc["padded_rows"]),
                      float(doc["padded_fraction"]), float(doc["eager_share"]),
                      int(doc["memory_bytes"]), float(doc["capture_s"]),
                      tuple(int(s) for s in doc["interpolated"]),
                      tuple(str(s) for s in doc["over_budget"]))


def traffic_from_json(doc: Mapping[str, Any]) -> Traffic:
    return Traffic(tuple(int(s) for s in doc["sizes"]), tuple(int(c) for c in doc["counts"]),
                   str(doc.get("source", "traffic")))


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

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
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
    def from_json(cls, doc: Mapping[str, Any],
                  verdict: Mapping[str, Any] | None = None) -> PlanResult:
        chosen = row_from_json(doc["chosen"])
        comparisons = tuple(row_from_json(r) for r in doc.get("comparisons") or ())
        bound = doc.get("lower_bound_s")
        tolerance = float(doc.get("tolerance", 0.0))
        return cls(CostCurve(tuple(point_from_json(p) for p in doc["curve"])),
                   traffic_from_json(doc["traffic"]), budgets_from_json(doc["budgets"]),
                   tuple(int(c) for c in doc["candidates"]), PlanMethod(doc["method"]),
                   str(doc["why"]), chosen, comparisons,
                   None if bound is None else float(bound), doc.get("current"), tolerance,
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
