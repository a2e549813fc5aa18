"""The gate's rules over a topology certificate: node counts (`max_nodes`), classes against
the baseline (`allow_topology_change`), and one workload's classes across GPUs
(`allow_cross_gpu_topology`). Pure."""

from __future__ import annotations

from collections.abc import Sequence

from graphcert.cert.certificate import Certificate
from graphcert.gate.fleet import gpu_text
from graphcert.gate.policy import Policy
from graphcert.gate.rules import Loaded, Rule, RuleResult, RuleStatus, max_nodes_rule
from graphcert.kinds.topology.compare import compare_topology
from graphcert.kinds.topology.result import VerifyResult

BASELINE_RULE = Rule.TOPOLOGY
TIMED = False
GATED_ALONE = None


def _result(cert: Certificate) -> VerifyResult:
    assert isinstance(cert.result, VerifyResult)
    return cert.result


def certificate_rules(cert: Certificate, policy: Policy) -> list[RuleResult]:
    """`max_nodes` over the classes."""
    return max_nodes_rule(cert, policy, [(f"class {c.capacity}", c.node_count)
                                         for c in _result(cert).classes])


def baseline_rules(cert: Certificate, base: Loaded, policy: Policy) -> list[RuleResult]:
    """Class by class against the baseline: a changed topology or launch shape fails unless
    `allow_topology_change` (then warns)."""
    rule = BASELINE_RULE
    current, baseline = _result(cert), _result(base.cert)
    classes = compare_topology(baseline, current)
    changed = [c for c in classes if c.change in ("topology", "shape")]
    other = [c.describe() for c in classes if c.change not in ("same", "topology", "shape")]
    if not changed:
        return [RuleResult(rule, RuleStatus.PASS,
                           f"{len(classes) - len(other)} class(es) unchanged against "
                           f"{base.path}", tuple(other))]
    status = RuleStatus.WARN if policy.allow_topology_change else RuleStatus.FAIL
    return [RuleResult(rule, status, f"{len(changed)} class(es) changed against {base.path}",
                       tuple(c.describe() for c in changed) + tuple(other))]


def cross_gpu_rule(ref: str, items: Sequence[Loaded], policy: Policy) -> RuleResult:
    """One workload's classes compared across the GPUs its certificates come from: a
    topology that differs fails unless `allow_cross_gpu_topology` (then warns)."""
    first = items[0]
    reference = first.cert.result
    assert isinstance(reference, VerifyResult)
    differ: list[str] = []
    notes: list[str] = []
    compared = 0
    for other in items[1:]:
        current = other.cert.result
        assert isinstance(current, VerifyResult)
        pair = f"{gpu_text(first.cert)} [{first.path}] vs {gpu_text(other.cert)} [{other.path}]"
        for c in compare_topology(reference, current):
            if c.change == "topology":
                where = (f"first differing node: {c.node_diff[0]}" if c.node_diff else
                         c.describe().split(": ", 1)[1])
                differ.append(f"class {c.capacity}: {pair}: {where}")
            elif c.change == "shape":
                notes.append(f"class {c.capacity}: launch shape differs, topology equal: {pair}")
            if c.change in ("same", "shape", "topology"):
                compared += 1
    gpus = len(items)
    if differ:
        status = RuleStatus.WARN if policy.allow_cross_gpu_topology else RuleStatus.FAIL
        allow = ("allow_cross_gpu_topology = true" if status is RuleStatus.WARN else
                 "allow_cross_gpu_topology = true accepts it")
        return RuleResult(Rule.CROSS_GPU, status,
                          f"{ref}: topology differs across {gpus} GPUs in "
                          f"{len(differ)} class comparison(s) ({allow})",
                          tuple(differ + notes))
    return RuleResult(Rule.CROSS_GPU, RuleStatus.PASS,
                      f"{ref}: topology equal across {gpus} GPUs ({compared} class "
                      f"comparison(s))", tuple(notes))
