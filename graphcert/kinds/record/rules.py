"""The gate's rules over a record certificate (issue 32): steady-state graph coverage, churn
(instantiations per topology), eager launches in steady state, and the topologies that
appeared or disappeared against a baseline record. Pure.
"""

from __future__ import annotations

from graphcert.cert.certificate import Certificate
from graphcert.gate.policy import Policy
from graphcert.gate.rules import Loaded, Rule, RuleResult, RuleStatus
from graphcert.kinds.record.result import RecordResult
from graphcert.recording import Recorded
from graphcert.render.names import short_name

SHOWN = 8  # names listed in a rule's details before "... and N more"


BASELINE_RULE = Rule.REGRESSION
TIMED = True
GATED_ALONE = None


def certificate_rules(cert: Certificate, policy: Policy) -> list[RuleResult]:
    """The record policy keys the policy sets for this program."""
    assert isinstance(cert.result, RecordResult)
    return record_rules(cert.result, policy, cert.workload.name, cert.workload.ref)


def baseline_rules(cert: Certificate, base: Loaded, policy: Policy) -> list[RuleResult]:
    """Topologies that appeared or disappeared against the baseline record."""
    current, baseline = cert.result, base.cert.result
    assert isinstance(current, RecordResult) and isinstance(baseline, RecordResult)
    return [record_baseline_rule(current, baseline, str(base.path), policy)]


def _short(h: str) -> str:
    return h[:12]


def _listed(items: list[str]) -> tuple[str, ...]:
    more = len(items) - SHOWN
    return tuple(items[:SHOWN]) + ((f"... and {more} more",) if more > 0 else ())


def record_rules(result: RecordResult, policy: Policy, name: str, ref: str | None
                 ) -> list[RuleResult]:
    """The record policy keys the policy sets for this program (none set: no rule)."""
    rules: list[RuleResult] = []
    rec = result.recorded
    floor = policy.for_workload(policy.min_graph_coverage, name, ref)
    if floor is not None:
        steady = rec.steady
        eager = _regions(rec) + _eager(rec)
        if steady is None or steady.fraction is None:
            rules.append(RuleResult(Rule.GRAPH_COVERAGE, RuleStatus.FAIL,
                                    "no graph launched a kernel: steady-state coverage is 0",
                                    _listed(eager)))
        else:
            frac = steady.fraction
            ok = frac >= float(floor)
            rules.append(RuleResult(
                Rule.GRAPH_COVERAGE, RuleStatus.PASS if ok else RuleStatus.FAIL,
                f"steady-state graph coverage {frac:.2%} of {steady.kernels} kernel launches "
                f"({'at least' if ok else 'below'} {float(floor):.2%})",
                () if ok else _listed(eager)))
    most = policy.for_workload(policy.max_instantiations_per_topology, name, ref)
    if most is not None:
        over = [c for c in rec.churn if c.per_graph > int(most)]
        top = max((c.per_graph for c in rec.churn), default=1 if rec.graphs else 0)
        details = [f"topology {_short(c.topology_hash)} (shape {c.shape_hash[:8]}) instantiated "
                   f"{c.instantiations} times, at most {c.peak_alive} alive at once (graphs "
                   f"{', '.join(map(str, c.rows[:SHOWN]))}) at "
                   f"{', '.join(f'{t / 1e9:.3f}s' for t in c.at_ns[:SHOWN])}" for c in over]
        rules.append(RuleResult(
            Rule.INSTANTIATIONS, RuleStatus.FAIL if over else RuleStatus.PASS,
            f"{len(over)} graph(s) instantiated more than {int(most)} times per executable "
            "(churn)" if over else
            f"at most {top} instantiation(s) per graph (limit {int(most)})",
            _listed(details)))
    cap = policy.for_workload(policy.max_steady_eager_launches, name, ref)
    if cap is not None:
        n = rec.steady.eager_kernels if rec.steady is not None else rec.overall.eager_kernels
        ok = n <= int(cap)
        rules.append(RuleResult(
            Rule.STEADY_EAGER, RuleStatus.PASS if ok else RuleStatus.FAIL,
            f"{n} eager kernel launch(es) in steady state (limit {int(cap)})",
            () if ok else _listed(_regions(rec) + _eager(rec))))
    return rules


def _eager(rec: Recorded) -> list[str]:
    """Each kernel launched eagerly in steady state ("1484 × name": launches of it), the
    count first and short, so that a wrapped line never leaves the count alone below a
    long name; the name in the short demangled form (one token, naming the operation) a
    reader can tell from its neighbours."""
    return [f"{e.count} \u00d7 {short_name(e.name)}" for e in rec.steady_eager]


def _regions(rec: Recorded) -> list[str]:
    """Where the eager launches were made, by NVTX range (none where not attributed),
    listed before the kernel names: the range names the code that fell back."""
    groups = rec.regions.groups if rec.regions is not None else ()
    return [f"launched in NVTX range {g.region}: {g.count}" for g in groups]


def record_baseline_rule(current: RecordResult, baseline: RecordResult, base_path: str,
                         policy: Policy) -> RuleResult:
    """Topologies that appeared or disappeared against the baseline record: a change fails
    unless allow_topology_change (then warns)."""
    now, before = set(current.topologies()), set(baseline.topologies())
    appeared = sorted(now - before)
    gone = sorted(before - now)
    if not appeared and not gone:
        return RuleResult(Rule.TOPOLOGY, RuleStatus.PASS,
                          f"the same {len(now)} topolog{'y' if len(now) == 1 else 'ies'} as "
                          f"{base_path}")
    status = RuleStatus.WARN if policy.allow_topology_change else RuleStatus.FAIL
    return RuleResult(Rule.TOPOLOGY, status,
                      f"{len(appeared)} topolog{'y' if len(appeared) == 1 else 'ies'} "
                      f"appeared, {len(gone)} disappeared against {base_path}",
                      _listed([f"appeared: {_short(h)}" for h in appeared]
                              + [f"disappeared: {_short(h)}" for h in gone]))
