"""The gate's rules: each takes typed certificates (graphcert.cert.certificate.Certificate,
made once by the loader) and the policy and gives RuleResults. The rules every kind shares
(its verdict, a changed method, the set's required kinds) are here; each kind's own rules
are in its folder (graphcert/kinds/<kind>/rules.py), found through the registry. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, cast

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import across_models, gpu_model
from graphcert.cert.registry import spec
from graphcert.cert.results.verdict import Status as VStatus
from graphcert.cert.results.verdict import Verdict
from graphcert.gate.policy import Policy
from graphcert.jsontypes import JSONObject


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
    # a record certificate's keys (graphcert.kinds.record.rules)
    GRAPH_COVERAGE = "min_graph_coverage"
    INSTANTIATIONS = "max_instantiations_per_topology"
    STEADY_EAGER = "max_steady_eager_launches"
    # a profile certificate's keys (graphcert.kinds.profile.rules)
    NODE_REGRESSION = "max_node_regression"
    PATH_REGRESSION = "max_critical_path_regression"
    REPLAY_REGRESSION = "max_replay_regression"


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

    def to_dict(self) -> JSONObject:
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


class KindRules(Protocol):
    """A kind's gate rules (graphcert/kinds/<kind>/rules.py). `BASELINE_RULE`: the rule a
    baseline comparison reports under; `TIMED`: its figures are compared per GPU model (a
    baseline of another model is named when it is all there is); `GATED_ALONE`: why the kind
    is never compared with a baseline (None: it is). A kind may also offer
    `cross_gpu_rule(ref, items, policy)`, the rule over one workload's certificates of
    several GPUs (graphcert.gate.fleet)."""

    BASELINE_RULE: Rule
    TIMED: bool
    GATED_ALONE: str | None

    def certificate_rules(self, cert: Certificate, policy: Policy) -> list[RuleResult]: ...

    def baseline_rules(self, cert: Certificate, base: Loaded,
                       policy: Policy) -> list[RuleResult]: ...


def rules_of(kind: str) -> KindRules:
    """The gate rules of certificate kind `kind`."""
    return cast(KindRules, spec(kind).module("rules"))


def certificate_rules(cert: Certificate, policy: Policy, *,
                      method_changed: bool = False) -> list[RuleResult]:
    """The rules over one certificate: its verdict (the stricter one the gate judges by), a
    changed method, and its kind's own rules."""
    rules = [verdict_rule(cert.verdict, policy)]
    if method_changed:
        rules.append(RuleResult(Rule.METHOD, RuleStatus.WARN,
                                f"graphcert's {cert.kind} method changed since this "
                                f"certificate was made (policy method_change = \"warn\")",
                                (f"re-run {spec(cert.kind).producer} {cert.workload.ref} "
                                 f"to refresh it",)))
    return rules + rules_of(cert.kind).certificate_rules(cert, policy)


def max_nodes_rule(cert: Certificate, policy: Policy,
                   rows: Sequence[tuple[str, int | None]]) -> list[RuleResult]:
    """`max_nodes` over the node count of each row (a class, a size, a swept point); no
    rule where the policy sets no limit for this workload."""
    limit = policy.for_workload(policy.max_nodes, cert.workload.name, cert.workload.ref)
    if limit is None:
        return []
    over = [f"{label}: {nodes} nodes > {limit}" for label, nodes in rows
            if nodes is not None and nodes > limit]
    most = max((nodes for _, nodes in rows if nodes is not None), default=0)
    return [RuleResult(Rule.MAX_NODES, RuleStatus.FAIL if over else RuleStatus.PASS,
                       f"{len(over)} over the limit of {limit} nodes" if over else
                       f"at most {most} nodes (limit {limit})", tuple(over))]


def baseline_rules(cert: Certificate, base: Loaded | None, policy: Policy, *,
                   other_model: Loaded | None = None) -> list[RuleResult]:
    """`cert` against its baseline certificate, by its kind's rules. `other_model`: the
    baseline's certificate of this kind and workload from another GPU model, named when it
    is all there is."""
    kind = rules_of(cert.kind)
    rule = kind.BASELINE_RULE
    if kind.GATED_ALONE is not None:
        return [RuleResult(rule, RuleStatus.PASS, kind.GATED_ALONE)]
    if base is None:
        why: tuple[str, ...] = ()
        models = across_models(other_model.cert, cert) if other_model is not None else None
        if other_model is not None and models is not None and kind.TIMED:
            why = (f"the baseline's {other_model.path} and this certificate are {models}",)
        return [RuleResult(rule, RuleStatus.WARN, "no baseline certificate to compare with",
                           why)]
    return kind.baseline_rules(cert, base, policy)


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
