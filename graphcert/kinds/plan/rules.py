"""The gate's rule over a plan certificate: the committed bucket list against the plan's
optimum (`max_plan_regret`). A plan is never compared with a baseline. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from graphcert.cert.certificate import Certificate
from graphcert.gate.policy import Policy
from graphcert.gate.rules import Loaded, Rule, RuleResult, RuleStatus
from graphcert.kinds.plan.result import CURRENT, PlanResult

BASELINE_RULE = Rule.REGRESSION
TIMED = True
GATED_ALONE = "a plan is gated by max_plan_regret, not compared with a baseline"


def certificate_rules(cert: Certificate, policy: Policy) -> list[RuleResult]:
    """`max_plan_regret`, where the policy sets it for this workload."""
    assert isinstance(cert.result, PlanResult)
    regret = policy.for_workload(policy.max_plan_regret, cert.workload.name, cert.workload.ref)
    if regret is None:
        return []
    return [plan_regret_rule(cert.result, float(regret),
                             allow_incomplete=policy.allow_incomplete)]


def baseline_rules(cert: Certificate, base: Loaded, policy: Policy) -> list[RuleResult]:
    """Never reached: GATED_ALONE says why a plan has no baseline comparison."""
    return [RuleResult(BASELINE_RULE, RuleStatus.PASS, GATED_ALONE)]


def _listed(buckets: Sequence[int]) -> str:
    # ", ": a list of 35 sizes is wider than a terminal, and may then wrap between sizes
    # (one unbroken token would be folded mid-number by the terminal)
    return ", ".join(map(str, buckets)) or "no graph"


def plan_regret_rule(plan: PlanResult, limit: float, *,
                     allow_incomplete: bool = False) -> RuleResult:
    """The engine's committed list (the comparison row the certificate marks as current)
    against the plan's optimum: more than `limit` slower per step fails. A plan that marks
    no committed list is never met vacuously: it fails (warns under allow_incomplete)."""
    best = plan.chosen
    row = plan.current_row
    if row is None:
        status = RuleStatus.WARN if allow_incomplete else RuleStatus.FAIL
        return RuleResult(Rule.PLAN_REGRET, status, (
            f"no committed list to hold against the plan: no comparison row is "
            f"{plan.current or CURRENT!r}" + (" (allow_incomplete = true)" if allow_incomplete
                                              else " (allow_incomplete = true accepts it)")),
            (f"compared: {', '.join(r.label for r in plan.comparisons) or 'none'}",))
    regret = plan.regret(row)
    details = [f"{row.label} ({_listed(row.buckets)}): {row.expected_s:.6g} s per step; "
               f"plan ({_listed(best.buckets)}): {best.expected_s:.6g} s per step"]
    if row.over_budget:
        details.append(f"{row.label} breaks the plan's budgets: {'; '.join(row.over_budget)}")
    if plan.method.value != "exact":
        details.append(f"the plan is not proven best ({plan.method.value})")
    if regret > limit:
        return RuleResult(Rule.PLAN_REGRET, RuleStatus.FAIL,
                          f"the committed list {row.label} is {regret:.2%} slower per step "
                          f"than the plan (max {limit:.2%})", tuple(details))
    return RuleResult(Rule.PLAN_REGRET, RuleStatus.PASS,
                      f"the committed list {row.label} is within {limit:.2%} of the plan "
                      f"({regret:+.2%} per step)", tuple(details))
