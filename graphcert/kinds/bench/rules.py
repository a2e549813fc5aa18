"""The gate's rules over a bench certificate: node counts, the speedup floor
(`min_speedup`), and timings against the baseline with interval logic (`max_regression`).
Pure."""

from __future__ import annotations

from collections.abc import Sequence

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import Change
from graphcert.cert.results.figures import Unavailable
from graphcert.gate.policy import Policy
from graphcert.gate.rules import Loaded, Rule, RuleResult, RuleStatus, max_nodes_rule
from graphcert.kinds.bench.compare import compare_bench
from graphcert.kinds.bench.result import BenchResult, SizeResult

BASELINE_RULE = Rule.REGRESSION
TIMED = True
GATED_ALONE = None


def _result(cert: Certificate) -> BenchResult:
    assert isinstance(cert.result, BenchResult)
    return cert.result


def certificate_rules(cert: Certificate, policy: Policy) -> list[RuleResult]:
    """`max_nodes` over the sizes, and the speedup floor where the policy sets one."""
    result = _result(cert)
    rules = max_nodes_rule(cert, policy, [(f"n {s.n}", s.node_count) for s in result.sizes])
    floor = policy.for_workload(policy.min_speedup, cert.workload.name, cert.workload.ref)
    if floor is not None:
        rules.append(speedup_rule(result, float(floor), policy.speedup_metric,
                                  allow_incomplete=policy.allow_incomplete))
    return rules


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


def baseline_rules(cert: Certificate, base: Loaded, policy: Policy) -> list[RuleResult]:
    """Every timing against the baseline's: slower beyond `max_regression` fails, an
    ambiguous change warns, and a moved figure whose sampling timed out warns."""
    rule = BASELINE_RULE
    current, baseline = _result(cert), _result(base.cert)
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


