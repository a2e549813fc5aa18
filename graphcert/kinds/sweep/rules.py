"""The gate's rules over a sweep certificate: node counts of its points (`max_nodes`); its
fit is shown, not compared (its runs' bench certificates are). Pure."""

from __future__ import annotations

from graphcert.cert.certificate import Certificate
from graphcert.gate.policy import Policy
from graphcert.gate.rules import Loaded, Rule, RuleResult, RuleStatus, max_nodes_rule
from graphcert.kinds.sweep.result import SweepFit

BASELINE_RULE = Rule.REGRESSION
TIMED = True
GATED_ALONE = None


def certificate_rules(cert: Certificate, policy: Policy) -> list[RuleResult]:
    """`max_nodes` over the swept points."""
    result = cert.result
    assert isinstance(result, SweepFit)
    return max_nodes_rule(cert, policy, [(f"{result.key}={v}", p.node_count) for v, p in
                                         zip(result.values, result.points, strict=False)])


def baseline_rules(cert: Certificate, base: Loaded, policy: Policy) -> list[RuleResult]:
    """A sweep's fit is shown, not compared."""
    return [RuleResult(BASELINE_RULE, RuleStatus.PASS, "a sweep's fit is shown, not compared "
                                                       "(its runs' bench certificates are)")]
