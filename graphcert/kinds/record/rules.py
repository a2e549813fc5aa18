"""The gate's rules over a record certificate: steady-state graph coverage, churn
(instantiations per topology), eager launches in steady state, and the topologies that
appeared or disappeared against a baseline record. Pure.

The first three hold the whole run and each process that launched a kernel on its own (a
failing process is named `pid 1234 (python worker.py)`); processes that launched none are
listed, not failed. Eager launches in NVTX ranges `allow_eager_ranges` matches count neither
against max_steady_eager_launches nor in min_graph_coverage's steady-state figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase

from graphcert.cert.certificate import Certificate
from graphcert.gate.policy import Policy
from graphcert.gate.rules import Loaded, Rule, RuleResult, RuleStatus
from graphcert.kinds.record.result import RecordResult, who
from graphcert.recording import Recorded
from graphcert.recording.regions import OUTSIDE, UNJOINED
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
    """The record policy keys the policy sets for this program (none set: no rule), each
    held by every process that launched a kernel and by the whole run."""
    globs = policy.for_workload(policy.allow_eager_ranges, name, ref) or ()
    scopes = _scopes(result)
    idle = [f"{who(p)} launched no kernel: not held to the rule" for p in result.processes
            if len(result.processes) > 1 and p.launched_nothing]
    rules: list[RuleResult] = []
    floor = policy.for_workload(policy.min_graph_coverage, name, ref)
    if floor is not None:
        rules.append(_combined(Rule.GRAPH_COVERAGE, [(at, _coverage(rec, float(floor), globs))
                                                     for at, rec in scopes], idle))
    most = policy.for_workload(policy.max_instantiations_per_topology, name, ref)
    if most is not None:
        rules.append(_combined(Rule.INSTANTIATIONS, [(at, _churn(rec, int(most)))
                                                     for at, rec in scopes], idle))
    cap = policy.for_workload(policy.max_steady_eager_launches, name, ref)
    if cap is not None:
        rules.append(_combined(Rule.STEADY_EAGER, [(at, _steady_eager(rec, int(cap), globs))
                                                   for at, rec in scopes], idle))
    return rules


Outcome = tuple[bool, str, list[str]]  # passed, summary, details


def _scopes(result: RecordResult) -> list[tuple[str | None, Recorded]]:
    """(None, the whole) first, then each process that launched a kernel by its name; the
    whole alone where there is one process (or none launched a kernel)."""
    ran = [p for p in result.processes if not p.launched_nothing]
    whole: list[tuple[str | None, Recorded]] = [(None, result.recorded)]
    if len(result.processes) == 1 or not ran:
        return whole
    return whole + [(who(p), p.recorded) for p in ran]


def _combined(rule: Rule, outcomes: list[tuple[str | None, Outcome]], idle: list[str]
              ) -> RuleResult:
    """One rule over the whole and each process: it fails where any fails; the summary is
    the whole's, the details name each failing process, then the processes skipped."""
    (_, (whole_ok, summary, details)), *each = outcomes
    failed = [(at, o) for at, o in each if not o[0]]
    lines = list(details) if not whole_ok else []
    for at, (_, said, more) in failed:
        lines += [f"{at}: {said}", *(f"{at}: {d}" for d in more[:SHOWN])]
    if failed:
        summary += f"; {len(failed)} of {len(each)} processes fail it on their own"
    notes = [d for d in details if d.startswith(ALLOWED)] if whole_ok else []
    ok = whole_ok and not failed
    return RuleResult(rule, RuleStatus.PASS if ok else RuleStatus.FAIL, summary,
                      _listed(notes + lines) + tuple(idle))


ALLOWED = "allowed by allow_eager_ranges"


def _allowed(rec: Recorded, globs: Sequence[str]) -> tuple[int, list[str]]:
    """Steady-state eager launches made in NVTX regions a glob matches (fnmatch on each
    component of the region path, or on the whole path), and the globs that matched."""
    if not globs or rec.regions is None:
        return 0, []
    count, used = 0, []
    for g in rec.regions.groups:
        if hit := _matching(g.region, globs):
            count += g.count
            used += [glob for glob in hit if glob not in used]
    return count, used


def _matching(region: str, globs: Sequence[str]) -> list[str]:
    """The globs that match `region` or one of its components; none for launches made
    outside every range or whose launch call was not recorded (`*` allows ranges, not
    those)."""
    if region in (OUTSIDE, UNJOINED):
        return []
    parts = [region, *region.split(" > ")]
    return [glob for glob in globs if any(fnmatchcase(part, glob) for part in parts)]


def _allowed_line(count: int, used: list[str]) -> list[str]:
    if not count:
        return []
    return [f"{ALLOWED}: {count:,} eager launch(es) in ranges matching "
            f"{', '.join(repr(u) for u in used)}"]


def _coverage(rec: Recorded, floor: float, globs: Sequence[str]) -> Outcome:
    """Steady-state coverage, eager launches in allowed ranges left out of it."""
    steady = rec.steady
    eager = _regions(rec, globs) + _eager(rec)
    if steady is None or steady.fraction is None:
        return False, "no graph launched a kernel: steady-state coverage is 0", eager
    allowed, used = _allowed(rec, globs)
    kernels = steady.kernels - allowed
    frac = steady.graph_kernels / kernels if kernels else 1.0
    ok = frac >= floor
    return (ok, f"steady-state graph coverage {frac:.2%} of {kernels} kernel launches "
                f"({'at least' if ok else 'below'} {floor:.2%})",
            _allowed_line(allowed, used) + ([] if ok else eager))


def _churn(rec: Recorded, most: int) -> Outcome:
    over = [c for c in rec.churn if c.per_graph > most]
    top = max((c.per_graph for c in rec.churn), default=1 if rec.graphs else 0)
    details = [f"topology {_short(c.topology_hash)} (shape {c.shape_hash[:8]}) instantiated "
               f"{c.instantiations} times, at most {c.peak_alive} alive at once (graphs "
               f"{', '.join(map(str, c.rows[:SHOWN]))}) at "
               f"{', '.join(f'{t / 1e9:.3f}s' for t in c.at_ns[:SHOWN])}" for c in over]
    return (not over, f"{len(over)} graph(s) instantiated more than {most} times per "
                      "executable (churn)" if over else
            f"at most {top} instantiation(s) per graph (limit {most})", details)


def _steady_eager(rec: Recorded, cap: int, globs: Sequence[str]) -> Outcome:
    """Eager launches in steady state (all of them where no graph ran), those in allowed
    ranges left out."""
    n = rec.steady.eager_kernels if rec.steady is not None else rec.overall.eager_kernels
    allowed, used = _allowed(rec, globs)
    ok = n - allowed <= cap
    return (ok, f"{n - allowed} eager kernel launch(es) in steady state (limit {cap})"
                + (f", {allowed:,} more allowed" if allowed else ""),
            _allowed_line(allowed, used) + ([] if ok else _regions(rec, globs) + _eager(rec)))


def _eager(rec: Recorded) -> list[str]:
    """Each kernel launched eagerly in steady state ("1484 × name": launches of it), the
    count first and short, so that a wrapped line never leaves the count alone below a
    long name; the name in the short demangled form (one token, naming the operation) a
    reader can tell from its neighbours."""
    return [f"{e.count} \u00d7 {short_name(e.name)}" for e in rec.steady_eager]


def _regions(rec: Recorded, globs: Sequence[str] = ()) -> list[str]:
    """Where the eager launches were made, by NVTX range (none where not attributed),
    listed before the kernel names: the range names the code that fell back. Ranges
    allow_eager_ranges allows are left out (the allowed line counts them)."""
    groups = rec.regions.groups if rec.regions is not None else ()
    return [f"launched in NVTX range {g.region}: {g.count}" for g in groups
            if not _matching(g.region, globs)]


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
