"""The gate's rules for a profile certificate: against its baseline, each node's
median (`max_node_regression`) and the critical path (`max_critical_path_regression`), judged
with their 95% intervals (graphcert.kinds.profile.compare); in span mode, each class's replay
span median (`max_replay_regression`) judged the same way. Any of these unset takes
`max_regression`. Profiles of different topologies fail, naming the first differing node; a
span-mode profile against a per-node baseline (or the reverse) fails as not comparable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import Change, NodeComparison
from graphcert.gate.policy import Policy
from graphcert.gate.rules import Loaded, Rule, RuleResult, RuleStatus
from graphcert.kinds.profile.compare import (
    ModeMismatch,
    TopologyMismatch,
    check_modes,
    compare_profiles,
    compare_spans,
)
from graphcert.kinds.profile.result import ProfileResult
from graphcert.kinds.profile.span import SPAN_MODE
from graphcert.render.names import short_name

BASELINE_RULE = Rule.REGRESSION
TIMED = True
GATED_ALONE = None


def certificate_rules(cert: Certificate, policy: Policy) -> list[RuleResult]:
    """None of its own: a profile is gated against its baseline only."""
    return []


def baseline_rules(cert: Certificate, base: Loaded, policy: Policy) -> list[RuleResult]:
    """Nodes and the critical path (span mode: replay spans) against the baseline's."""
    current, baseline = cert.result, base.cert.result
    assert isinstance(current, ProfileResult) and isinstance(baseline, ProfileResult)
    return profile_baseline_rules(current, baseline, str(base.path), policy,
                                  cert.workload.name, cert.workload.ref)


def profile_baseline_rules(current: ProfileResult, baseline: ProfileResult, base_path: str,
                           policy: Policy, workload: str, ref: str) -> list[RuleResult]:
    """The node and critical-path rules of `current` against `baseline` (span mode: the
    replay rule)."""
    def limit(value: float | Mapping[str, float] | None) -> float:
        got = policy.for_workload(value, workload, ref)
        return float(got) if got is not None else policy.max_regression

    try:
        check_modes(baseline, current)
    except ModeMismatch as exc:
        rule = Rule.REPLAY_REGRESSION if current.mode == SPAN_MODE else Rule.NODE_REGRESSION
        return [RuleResult(rule, RuleStatus.FAIL,
                           f"not comparable with {base_path}: {exc.message}",
                           (exc.hint,) if exc.hint else ())]
    if current.mode == SPAN_MODE:
        replay_limit = limit(policy.max_replay_regression)
        try:
            comps, notes = compare_spans(baseline, current, limit=replay_limit)
        except TopologyMismatch as exc:
            return [_mismatch(Rule.REPLAY_REGRESSION, base_path, exc)]
        return [_judged(Rule.REPLAY_REGRESSION, replay_limit, comps, notes, "replay span(s)",
                        base_path)]
    node_limit = limit(policy.max_node_regression)
    path_limit = limit(policy.max_critical_path_regression)
    try:
        comps, notes = compare_profiles(baseline, current, node_limit=node_limit,
                                        path_limit=path_limit)
    except TopologyMismatch as exc:
        return [_mismatch(Rule.NODE_REGRESSION, base_path, exc)]
    return [_judged(Rule.NODE_REGRESSION, node_limit, [c for c in comps if c.index is not None],
                    notes, "node(s)", base_path),
            _judged(Rule.PATH_REGRESSION, path_limit, [c for c in comps if c.index is None],
                    notes, "critical path(s)", base_path)]


def _mismatch(rule: Rule, base_path: str, exc: TopologyMismatch) -> RuleResult:
    return RuleResult(rule, RuleStatus.FAIL, f"not comparable with {base_path}: {exc.message}",
                      (exc.hint,) if exc.hint else ())


def _judged(rule: Rule, lim: float, rows: Sequence[NodeComparison], notes: Sequence[str],
            what: str, base_path: str) -> RuleResult:
    """FAIL where a row is slower beyond both intervals; WARN where only ambiguous."""
    slower = [c for c in rows if c.change is Change.SLOWER]
    ambiguous = [c for c in rows if c.change is Change.AMBIGUOUS]
    if slower:
        return RuleResult(rule, RuleStatus.FAIL,
                          f"{len(slower)} {what} slower by more than {lim:.1%} "
                          f"against {base_path}",
                          tuple(c.describe(short_name) for c in slower + ambiguous)
                          + tuple(notes))
    if not rows:  # nothing compared (a class without a span, say): not a pass
        return RuleResult(rule, RuleStatus.WARN, f"no {what} to compare with {base_path}",
                          tuple(notes))
    return RuleResult(rule, RuleStatus.WARN if ambiguous else RuleStatus.PASS,
                      f"{len(rows)} {what} within {lim:.1%} of {base_path}"
                      + (f" ({len(ambiguous)} ambiguous)" if ambiguous else ""),
                      tuple(c.describe(short_name) for c in ambiguous) + tuple(notes))
