"""A plan certificate's claims held against its own evidence (graphcert.cert.evidence's part
for kind "plan"). Pure: no numpy.

Everything a plan derives is recomputed from the curve, traffic and budgets it records, the
way graphcert.plan computed it (its own `evaluate`): the traffic digest, every row's figures
(expected time, padding, eager share, memory, capture time, interpolated sizes, broken
budgets), the chosen list's place among the candidates, and the verdict `judge` gives.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from graphcert.cert.evidence import RANK, Doc
from graphcert.cert.kind import KindResult
from graphcert.errors import InputError
from graphcert.kinds.plan.result import (
    PlanMethod,
    PlanResult,
    traffic_digest,
)
from graphcert.plan.costs import Budgets, CostCurve
from graphcert.plan.evaluate import Evaluation, evaluate
from graphcert.plan.traffic import Traffic

REL = 1e-9  # float rounding between the way graphcert summed a figure and this
_FIGURES = ("expected_s", "padded_rows", "padded_fraction", "eager_share", "capture_s")


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL, abs_tol=1e-300)


def contradictions(results: Doc, verdict: Doc, result: KindResult) -> list[str]:
    """Every way a schema-valid plan certificate's results and verdict disagree (`result`:
    the same results, typed; the values graphcert.plan builds checked order and range as
    they were read, as the planner did)."""
    assert isinstance(result, PlanResult)
    return list(_contradictions(results, verdict, result))


def _contradictions(results: Doc, verdict: Doc, plan: PlanResult) -> Iterator[str]:
    where = "results"
    traffic, curve, budgets = plan.traffic, plan.curve, plan.budgets
    recorded = results["traffic"]["digest"]
    if recorded != traffic_digest(traffic):
        yield (f"{where}.traffic.digest is {recorded[:12]}... but the histogram it holds "
               f"digests to {traffic_digest(traffic)[:12]}...")
    candidates = results["candidates"]
    if list(candidates) != sorted(set(candidates)):
        yield f"{where}.candidates are not ascending and distinct"
    if budgets.max_size is not None and any(c > budgets.max_size for c in candidates):
        yield f"{where}.candidates hold a size above max_size {budgets.max_size:,}"
    if results["method"] == PlanMethod.EXACT.value and results["lower_bound_s"] is not None:
        yield f"{where}.lower_bound_s is set but the method is exact (a bound is for thinned)"
    rows = [("chosen", results["chosen"])] + [
        (f"comparisons[{i}]", r) for i, r in enumerate(results["comparisons"])]
    labels = [r["label"] for _, r in rows]
    if labels[0] != "plan" or len(set(labels)) != len(labels):
        yield f"{where}: the row labels {labels} are not 'plan' then distinct names"
    current = results["current"]
    if current is not None and current not in labels[1:]:
        yield f"{where}.current names {current!r}, which no comparison row is"
    stray = [b for b in results["chosen"]["buckets"] if b not in set(candidates)]
    if stray:
        yield f"{where}.chosen holds bucket {stray[0]:,}, which is not a candidate"
    for name, row in rows:
        yield from _row(f"{where}.{name}", row, traffic, curve, budgets)
    judged = PlanResult.judge(plan.chosen, plan.comparisons, plan.tolerance)
    stored = str(verdict.get("status") or ("pass" if verdict["passed"] else "fail"))
    if RANK[judged.status.value] != RANK[stored]:
        why = judged.reasons[0] if judged.reasons else "nothing failed"
        yield f"verdict.status says {stored!r} but the plan's figures give " \
              f"{judged.status.value!r} ({why})"


def _row(where: str, row: Doc, traffic: Traffic, curve: CostCurve,
         budgets: Budgets) -> Iterator[str]:
    """One row's figures against `evaluate` of its buckets on the recorded curve."""
    buckets = list(row["buckets"])
    if buckets != sorted(set(buckets)):
        yield f"{where}.buckets are not ascending and distinct"
        return
    try:
        again: Evaluation = evaluate(buckets, traffic, curve, budgets, label=row["label"])
    except InputError as exc:
        yield f"{where}: {exc.message}"
        return
    for name in _FIGURES:
        if not _close(float(row[name]), getattr(again, name)):
            yield (f"{where}.{name} is {float(row[name]):.6g} but the curve and traffic give "
                   f"{getattr(again, name):.6g}")
    if row["memory_bytes"] != again.memory_bytes:
        yield (f"{where}.memory_bytes is {row['memory_bytes']:,} but its buckets' pools sum "
               f"to {again.memory_bytes:,}")
    if list(row["interpolated"]) != list(again.interpolated):
        yield (f"{where}.interpolated is {list(row['interpolated'])} but the curve "
               f"interpolates {list(again.interpolated)}")
    if list(row["over_budget"]) != list(again.over_budget):
        yield (f"{where}.over_budget is {list(row['over_budget'])} but the budgets give "
               f"{list(again.over_budget)}")
