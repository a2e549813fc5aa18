"""The gate's rules for a profile certificate: against its baseline, each node's
median (`max_node_regression`) and the critical path (`max_critical_path_regression`), judged
with their 95% intervals (graphcert.kinds.profile.compare). Either limit unset takes
`max_regression`. Profiles of different topologies fail, naming the first differing node.
"""

from __future__ import annotations

from collections.abc import Mapping

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import Change
from graphcert.gate.policy import Policy
from graphcert.gate.rules import Loaded, Rule, RuleResult, RuleStatus
from graphcert.kinds.profile.compare import TopologyMismatch, compare_profiles
from graphcert.kinds.profile.result import ProfileResult
from graphcert.render.names import short_name

BASELINE_RULE = Rule.REGRESSION
TIMED = True
GATED_ALONE = None


def certificate_rules(cert: Certificate, policy: Policy) -> list[RuleResult]:
    """None of its own: a profile is gated against its baseline only."""
    return []


def baseline_rules(cert: Certificate, base: Loaded, policy: Policy) -> list[RuleResult]:
    """Nodes and the critical path against the baseline's profile."""
    current, baseline = cert.result, base.cert.result
    assert isinstance(current, ProfileResult) and isinstance(baseline, ProfileResult)
    return profile_baseline_rules(current, baseline, str(base.path), policy,
                                  cert.workload.name, cert.workload.ref)


def profile_baseline_rules(current: ProfileResult, baseline: ProfileResult, base_path: str,
                           policy: Policy, workload: str, ref: str) -> list[RuleResult]:
    """The node and critical-path rules of `current` against `baseline`."""
    def limit(value: float | Mapping[str, float] | None) -> float:
        got = policy.for_workload(value, workload, ref)
        return float(got) if got is not None else policy.max_regression

    node_limit = limit(policy.max_node_regression)
    path_limit = limit(policy.max_critical_path_regression)
    try:
        comps, notes = compare_profiles(baseline, current, node_limit=node_limit,
                                        path_limit=path_limit)
    except TopologyMismatch as exc:
        return [RuleResult(Rule.NODE_REGRESSION, RuleStatus.FAIL,
                           f"not comparable with {base_path}: {exc.message}",
                           (exc.hint,) if exc.hint else ())]
    out = []
    for rule, lim, rows in (
            (Rule.NODE_REGRESSION, node_limit, [c for c in comps if c.index is not None]),
            (Rule.PATH_REGRESSION, path_limit, [c for c in comps if c.index is None])):
        slower = [c for c in rows if c.change is Change.SLOWER]
        ambiguous = [c for c in rows if c.change is Change.AMBIGUOUS]
        what = "node(s)" if rule is Rule.NODE_REGRESSION else "critical path(s)"
        if slower:
            out.append(RuleResult(rule, RuleStatus.FAIL,
                                  f"{len(slower)} {what} slower by more than {lim:.1%} "
                                  f"against {base_path}",
                                  tuple(c.describe(short_name) for c in slower + ambiguous)
                                  + tuple(notes)))
        else:
            out.append(RuleResult(rule, RuleStatus.WARN if ambiguous else RuleStatus.PASS,
                                  f"{len(rows)} {what} within {lim:.1%} of {base_path}"
                                  + (f" ({len(ambiguous)} ambiguous)" if ambiguous else ""),
                                  tuple(c.describe(short_name) for c in ambiguous) + tuple(notes)))
    return out
