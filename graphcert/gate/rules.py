"""The gate's rules: each takes typed certificates (graphcert.cert.certificate.Certificate,
made once by the loader) and the policy and gives RuleResults.

Baseline comparison uses nvbench-style interval logic (graphcert.cert.compare). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import (
    Change,
    across_models,
    compare_bench,
    compare_topology,
    gpu_model,
)
from graphcert.cert.document import PRODUCER
from graphcert.cert.results import (
    BenchResult,
    SizeResult,
    SweepFit,
    Unavailable,
    Verdict,
    VerifyResult,
)
from graphcert.cert.results import Status as VStatus
from graphcert.cert.results.plan import CURRENT, PlanResult
from graphcert.cert.results.profile import ProfileResult
from graphcert.cert.results.record import RecordResult
from graphcert.gate.policy import Policy


class Rule(str, Enum):
    """What the gate checks; the value is the policy key a user changes."""

    VERDICT = "verdict"
    REQUIRE = "require"
    REQUIRE_KINDS = "require_kinds"
    MAX_NODES = "max_nodes"
    MIN_SPEEDUP = "min_speedup"
    TOPOLOGY = "allow_topology_change"
    CROSS_GPU = "allow_cross_gpu_topology"
    REGRESSION = "max_regression"
    BASELINE = "baseline"
    METHOD = "method_change"
    PLAN_REGRET = "max_plan_regret"
    # a record certificate's keys (issue 32; graphcert.gate.record)
    GRAPH_COVERAGE = "min_graph_coverage"
    INSTANTIATIONS = "max_instantiations_per_topology"
    STEADY_EAGER = "max_steady_eager_launches"
    # a profile certificate's keys (issue 31; graphcert.gate.profile)
    NODE_REGRESSION = "max_node_regression"
    PATH_REGRESSION = "max_critical_path_regression"


class RuleStatus(str, Enum):
    """A rule's outcome; WARN is reported and never fails the gate."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class RuleResult:
    """One rule applied to one certificate (or to the set): outcome, summary, details."""

    rule: Rule
    status: RuleStatus
    summary: str
    details: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule.value, "status": self.status.value, "summary": self.summary,
                "details": list(self.details)}


@dataclass(frozen=True)
class Loaded:
    """A certificate the gate accepted, with the path it shows."""

    path: str
    cert: Certificate
    method_changed: bool = False  # graphcert's method changed and the policy says "warn"

    @property
    def key(self) -> tuple[str, str, str]:
        """(kind, workload reference, GPU model): what a baseline is matched by. Timings are
        compared per GPU model, never across models."""
        return (self.cert.kind, self.cert.workload.ref, gpu_model(self.cert))

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """`key` and the GPU's UUID: one certificate per workload, kind and physical GPU."""
        return (*self.key, self.cert.environment.gpu.ident[1])


def verdict_rule(verdict: Verdict, policy: Policy) -> RuleResult:
    """Pass passes, fail fails; incomplete fails unless the policy allows it (then warns)."""
    if verdict.status is VStatus.PASS:
        return RuleResult(Rule.VERDICT, RuleStatus.PASS, "passed", verdict.reasons)
    if verdict.status is VStatus.FAIL:
        return RuleResult(Rule.VERDICT, RuleStatus.FAIL, "the certificate's verdict is fail",
                          verdict.reasons)
    if policy.allow_incomplete:
        return RuleResult(Rule.VERDICT, RuleStatus.WARN,
                          "incomplete: something could not run (allow_incomplete = true)",
                          verdict.reasons)
    return RuleResult(Rule.VERDICT, RuleStatus.FAIL, "the certificate's verdict is incomplete: "
                      "something could not run (allow_incomplete = true accepts it)",
                      verdict.reasons)


def certificate_rules(cert: Certificate, policy: Policy, *,
                      method_changed: bool = False) -> list[RuleResult]:
    """The rules over one certificate: its verdict (the stricter one the gate judges by), a
    changed method, node counts and the speedup floor."""
    name, result = cert.workload.name, cert.result
    rules = [verdict_rule(cert.verdict, policy)]
    if method_changed:
        rules.append(RuleResult(Rule.METHOD, RuleStatus.WARN,
                                f"graphcert's {cert.kind} method changed since this "
                                f"certificate was made (policy method_change = \"warn\")",
                                (f"re-run {PRODUCER[cert.kind]} {cert.workload.ref} "
                                 f"to refresh it",)))
    limit = policy.for_workload(policy.max_nodes, name, cert.workload.ref)
    if isinstance(result, RecordResult):  # issue 32: its own keys (graphcert.gate.record)
        from graphcert.gate.record import record_rules

        return rules + record_rules(result, policy, name, cert.workload.ref)
    if isinstance(result, ProfileResult):  # issue 31: gated against its baseline only
        return rules
    if limit is not None and not isinstance(result, PlanResult):  # a plan has no graph
        rows: list[tuple[str, int | None]] = (
            [(f"class {c.capacity}", c.node_count) for c in result.classes]
            if isinstance(result, VerifyResult) else
            [(f"{result.key}={v}", p.node_count) for v, p in zip(result.values, result.points,
                                                                  strict=False)]
            if isinstance(result, SweepFit) else
            [(f"n {s.n}", s.node_count) for s in result.sizes])
        over = [f"{label}: {nodes} nodes > {limit}" for label, nodes in rows
                if nodes is not None and nodes > limit]
        most = max((nodes for _, nodes in rows if nodes is not None), default=0)
        rules.append(RuleResult(Rule.MAX_NODES, RuleStatus.FAIL if over else RuleStatus.PASS,
                                f"{len(over)} over the limit of {limit} nodes" if over else
                                f"at most {most} nodes (limit {limit})", tuple(over)))
    floor = policy.for_workload(policy.min_speedup, name, cert.workload.ref)
    if floor is not None and isinstance(result, BenchResult):
        rules.append(speedup_rule(result, float(floor), policy.speedup_metric,
                                   allow_incomplete=policy.allow_incomplete))
    regret = policy.for_workload(policy.max_plan_regret, name, cert.workload.ref)
    if regret is not None and isinstance(result, PlanResult):
        rules.append(plan_regret_rule(result, float(regret),
                                      allow_incomplete=policy.allow_incomplete))
    return rules


def _listed(buckets: Sequence[int]) -> str:
    return ",".join(map(str, buckets)) or "no graph"


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


def _with_timeouts(rule: RuleResult, timeouts: Sequence[str]) -> RuleResult:
    """A rule resting on timings whose sampling ended on its timeout (short of its target)
    warns, naming each; a failing rule stays failed."""
    if not timeouts:
        return rule
    notes = tuple(f"{t}: sampling ended on its timeout, short of its target"
                  for t in timeouts)
    status = RuleStatus.WARN if rule.status is RuleStatus.PASS else rule.status
    return RuleResult(rule.rule, status, rule.summary, rule.details + notes)


def _why_unmeasured(size: SizeResult, metric: str) -> str:
    """Why `size` has no `metric` speedup: the unavailable figures' reasons, if recorded."""
    why = [f"{side} {metric}: {fig.reason}" for side in ("stream", "graph")
           for fig in [getattr(size.way(side), metric)] if isinstance(fig, Unavailable)]
    return f" ({'; '.join(why)})" if why else ""


def speedup_rule(result: BenchResult, floor: float, metric: str, *,
                 allow_incomplete: bool = False) -> RuleResult:
    """Each size's speedup interval against `floor`. A floor no size could be measured
    against is never met vacuously: it fails (warns under allow_incomplete), naming why."""
    fails, warns, unmeasured, lowest = [], [], [], None
    for s in result.sizes:
        iv = s.speedup.get(metric)
        if iv is None:
            unmeasured.append(f"n={s.n}: no {metric} speedup measured{_why_unmeasured(s, metric)}")
            continue
        lowest = iv.median if lowest is None else min(lowest, iv.median)
        text = f"n={s.n}: {metric} speedup {iv.median:.2f}x [{iv.low:.2f}, {iv.high:.2f}]"
        if iv.high < floor:
            fails.append(f"{text} < {floor:g}x")
        elif iv.median < floor:
            warns.append(f"{text}: median below {floor:g}x, interval reaches it")
    if lowest is None:  # nothing to hold the floor against
        status = RuleStatus.WARN if allow_incomplete else RuleStatus.FAIL
        summary = (f"no size has a {metric} speedup to hold against the {floor:g}x floor" +
                   (" (allow_incomplete = true)" if allow_incomplete else
                    " (allow_incomplete = true accepts it)"))
        return RuleResult(Rule.MIN_SPEEDUP, status, summary, tuple(unmeasured))
    status = (RuleStatus.FAIL if fails else
              RuleStatus.WARN if warns or unmeasured else RuleStatus.PASS)
    summary = (f"{len(fails)} size(s) below {floor:g}x {metric} speedup" if fails else
               f"lowest {metric} speedup {lowest:.2f}x (min {floor:g}x)")
    return _with_timeouts(RuleResult(Rule.MIN_SPEEDUP, status, summary,
                                     tuple(fails + warns + unmeasured)),
                          result.timeouts(metric))


def baseline_rules(cert: Certificate, base: Loaded | None, policy: Policy, *,
                   other_model: Loaded | None = None) -> list[RuleResult]:
    """`cert` against its baseline certificate: topology class by class, timings with
    interval logic. `other_model`: the baseline's certificate of this kind and workload
    from another GPU model, named when it is all there is."""
    rule = Rule.TOPOLOGY if cert.kind == "topology" else Rule.REGRESSION
    if isinstance(cert.result, PlanResult):  # its own figures decide it (max_plan_regret)
        return [RuleResult(rule, RuleStatus.PASS, "a plan is gated by max_plan_regret, not "
                                                  "compared with a baseline")]
    if base is None:
        why: tuple[str, ...] = ()
        models = across_models(other_model.cert, cert) if other_model is not None else None
        if other_model is not None and models is not None and cert.kind != "topology":
            why = (f"the baseline's {other_model.path} and this certificate are {models}",)
        return [RuleResult(rule, RuleStatus.WARN, "no baseline certificate to compare with",
                           why)]
    current, baseline = cert.result, base.cert.result
    if isinstance(current, RecordResult) and isinstance(baseline, RecordResult):
        from graphcert.gate.record import record_baseline_rule

        return [record_baseline_rule(current, baseline, str(base.path), policy)]
    if isinstance(current, ProfileResult) and isinstance(baseline, ProfileResult):
        from graphcert.gate.profile import profile_baseline_rules

        return profile_baseline_rules(current, baseline, str(base.path), policy,
                                      cert.workload.name, cert.workload.ref)
    if isinstance(current, SweepFit):  # its runs' own bench certificates are compared
        return [RuleResult(rule, RuleStatus.PASS, "a sweep's fit is shown, not compared "
                                              "(its runs' bench certificates are)")]
    if isinstance(current, VerifyResult) and isinstance(baseline, VerifyResult):
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
    assert isinstance(current, BenchResult) and isinstance(baseline, BenchResult)
    comps, notes = compare_bench(baseline, current, min_noise=policy.min_noise)
    # A timing that compared same is settled whatever its sampling's end: sameness is judged
    # against the samples' noise, which widens the threshold. One that moved (or is
    # ambiguous) rests on a figure short of its target, and that warns.
    moved = {c.label for c in comps if c.change is not Change.SAME}
    compared = {c.label for c in comps}
    timed_out = [(f"{side} {t}", t in moved)
                 for side, r in (("current", current), ("baseline", baseline))
                 for t in r.timeouts() if t in compared]
    timeouts = [label for label, changed in timed_out if changed]
    notes += [f"{label}: sampling ended on its timeout; compared same within its noise"
              for label, changed in timed_out if not changed]
    slower = [c for c in comps if c.change is Change.SLOWER and c.diff > policy.max_regression]
    ambiguous = [c for c in comps if c.change is Change.AMBIGUOUS]
    tally = {ch: sum(1 for c in comps if c.change is ch) for ch in Change}
    counts = ", ".join(f"{v} {ch.value}" for ch, v in tally.items() if v)
    if slower:
        result = RuleResult(rule, RuleStatus.FAIL, f"{len(slower)} timing(s) slower by more than "
                                               f"{policy.max_regression:.1%} against {base.path}",
                            tuple(c.describe() for c in slower + ambiguous) + tuple(notes))
    else:
        result = RuleResult(rule, RuleStatus.WARN if ambiguous else RuleStatus.PASS,
                            f"{len(comps)} timing(s): {counts or 'none compared'}",
                            tuple(c.describe() for c in ambiguous) + tuple(notes))
    return [_with_timeouts(result, timeouts)]


def set_rules(loaded: Sequence[Loaded], base: Sequence[Loaded], policy: Policy,
               with_baseline: bool) -> list[RuleResult]:
    have: set[tuple[str, str]] = {(it.cert.workload.name, it.cert.kind) for it in loaded}
    out = []
    if policy.require:
        missing = [f"{w}: no {k} certificate" for w, kinds in sorted(policy.require.items())
                   for k in kinds if (w, k) not in have]
        out.append(RuleResult(Rule.REQUIRE, RuleStatus.FAIL if missing else RuleStatus.PASS,
                              f"{len(missing)} required certificate(s) missing" if missing else
                              "all required certificates present", tuple(missing)))
    if policy.require_kinds:
        # every workload: built-ins and steps, not the programs graphcert record observed
        # (a program has no topology or bench certificate to give)
        programs = {w for w, k in have if k == "record"} - {w for w, k in have if k != "record"}
        workloads = sorted(({w for w, _ in have} - programs) | set(policy.require))
        missing = [f"{w}: no {k} certificate" for w in workloads for k in policy.require_kinds
                   if (w, k) not in have]
        out.append(RuleResult(Rule.REQUIRE_KINDS, RuleStatus.FAIL if missing else RuleStatus.PASS,
                              f"{len(missing)} required certificate(s) missing" if missing else
                              f"every workload has {', '.join(policy.require_kinds)}",
                              tuple(missing)))
    if with_baseline:
        current = {it.key for it in loaded}
        gone = [f"{k[1]} {k[0]} on {k[2]} ({b.path})" for b in base
                for k in [b.key] if k not in current]
        if gone:
            out.append(RuleResult(Rule.BASELINE, RuleStatus.WARN,
                                  f"{len(gone)} baseline certificate(s) have no current one",
                                  tuple(gone)))
    return out
