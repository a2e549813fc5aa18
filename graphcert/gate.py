"""The CI gate: policy, baseline comparison with nvbench-style interval logic, the report.

Pure and import-light (no numpy, no CUDA): `graphcert gate` must start fast on any machine.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from graphcert.certdiff import (
    QUANTITIES,
    Change,
    compare_bench,
    compare_topology,
)
from graphcert.certificate import (
    CERT_KINDS,
    CertificateError,
    DigestOf,
    NotACertificate,
    check_document,
    memoized_digests,
    read_document,
)
from graphcert.errors import GraphcertError


class PolicyError(GraphcertError):
    """A policy file that cannot be used (exit 2)."""


class Rule(str, Enum):
    """What the gate checks; the value is the policy key a user changes."""

    VERDICT = "verdict"
    REQUIRE = "require"
    REQUIRE_KINDS = "require_kinds"
    MAX_NODES = "max_nodes"
    MIN_SPEEDUP = "min_speedup"
    TOPOLOGY = "allow_topology_change"
    REGRESSION = "max_regression"
    BASELINE = "baseline"


class Status(str, Enum):
    """A rule's outcome; WARN is reported and never fails the gate."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"


# ---------------------------------------------------------------------------------- policy

@dataclass(frozen=True)
class Policy:
    """What the gate requires. Per-workload values use a table with an optional '*'."""

    require: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    require_kinds: tuple[str, ...] = ()
    min_speedup: float | Mapping[str, float] | None = None
    speedup_metric: str = "end_to_end"
    max_nodes: int | Mapping[str, int] | None = None
    allow_topology_change: bool = False
    max_regression: float = 0.05
    min_noise: float = 0.005
    source: str = "defaults"

    def for_workload(self, value: Any, workload: str) -> Any:
        """A scalar as is; a table's entry for `workload`, else its '*', else None."""
        if isinstance(value, Mapping):
            return value.get(workload, value.get("*"))
        return value

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "require": {k: list(v) for k, v in self.require.items()},
            "require_kinds": list(self.require_kinds),
            "min_speedup": _plain(self.min_speedup),
            "speedup_metric": self.speedup_metric,
            "max_nodes": _plain(self.max_nodes),
            "allow_topology_change": self.allow_topology_change,
            "max_regression": self.max_regression,
            "min_noise": self.min_noise,
        }


def _plain(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value


POLICY_KEYS = ("require", "require_kinds", "min_speedup", "speedup_metric", "max_nodes",
               "allow_topology_change", "max_regression", "min_noise")


def _toml_loads(text: str) -> dict[str, Any]:
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError as exc:
            raise PolicyError("reading a TOML policy on Python 3.10 needs the tomli package",
                              hint="pip install tomli") from exc
    data: dict[str, Any] = tomllib.loads(text)
    return data


def load_policy(path: Path | None = None, *, cwd: Path | None = None) -> Policy:
    """The policy from `path` (its `[tool.graphcert.gate]` or its top level), else from
    ./pyproject.toml's `[tool.graphcert.gate]`, else the defaults."""
    if path is None:
        pyproject = (cwd or Path.cwd()) / "pyproject.toml"
        if not pyproject.is_file():
            return Policy()
        table = _read_toml(pyproject).get("tool", {}).get("graphcert", {}).get("gate")
        if table is None:
            return Policy()
        return parse_policy(table, f"{pyproject.name} [tool.graphcert.gate]")
    data = _read_toml(path)
    nested = data.get("tool", {}).get("graphcert", {}).get("gate")
    if nested is not None:
        return parse_policy(nested, f"{path} [tool.graphcert.gate]")
    return parse_policy(data, str(path))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PolicyError(f"policy file {path} cannot be read: {exc.strerror or exc}") from exc
    try:
        return _toml_loads(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError is a ValueError
        raise PolicyError(f"policy file {path} is not valid TOML: {exc}") from exc


def parse_policy(table: Mapping[str, Any], source: str) -> Policy:
    """Check a policy table key by key; every problem is one PolicyError line."""
    if not isinstance(table, Mapping):
        raise PolicyError(f"policy {source}: expected a table")
    unknown = sorted(set(table) - set(POLICY_KEYS))
    if unknown:
        raise PolicyError(f"policy {source}: unknown key {unknown[0]!r}",
                          hint=f"known keys: {', '.join(POLICY_KEYS)}")

    def bad(key: str, wanted: str) -> PolicyError:
        return PolicyError(f"policy {source}: {key} must be {wanted}, not {table[key]!r}")

    def kinds(key: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or any(k not in CERT_KINDS for k in value):
            raise bad(key, f"a list of certificate kinds ({', '.join(CERT_KINDS)})")
        return tuple(value)

    def number(key: str, value: Any, integer: bool = False) -> Any:
        ok = isinstance(value, int) if integer else isinstance(value, (int, float))
        if not ok or isinstance(value, bool) or value < 0:
            raise bad(key, "a non-negative " + ("integer" if integer else "number"))
        return value

    def per_workload(key: str, integer: bool = False) -> Any:
        value = table.get(key)
        if value is None:
            return None
        if isinstance(value, Mapping):
            return {str(k): number(key, v, integer) for k, v in value.items()}
        return number(key, value, integer)

    require = table.get("require", {})
    if not isinstance(require, Mapping):
        raise bad("require", 'a table like {scan = ["topology", "bench"]}')
    allow = table.get("allow_topology_change", False)
    if not isinstance(allow, bool):
        raise bad("allow_topology_change", "true or false")
    metric = table.get("speedup_metric", "end_to_end")
    if metric not in QUANTITIES:
        raise bad("speedup_metric", " or ".join(QUANTITIES))
    return Policy(
        require={str(w): kinds("require", v) for w, v in require.items()},
        require_kinds=kinds("require_kinds", table.get("require_kinds", [])),
        min_speedup=per_workload("min_speedup"),
        speedup_metric=metric,
        max_nodes=per_workload("max_nodes", integer=True),
        allow_topology_change=allow,
        max_regression=float(number("max_regression", table.get("max_regression", 0.05))),
        min_noise=float(number("min_noise", table.get("min_noise", 0.005))),
        source=source,
    )


# ------------------------------------------------------------------------------------ gate

@dataclass(frozen=True)
class RuleResult:
    """One rule applied to one certificate (or to the set): outcome, summary, details."""

    rule: Rule
    status: Status
    summary: str
    details: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule.value, "status": self.status.value, "summary": self.summary,
                "details": list(self.details)}


@dataclass(frozen=True)
class CertificateResult:
    """The gate's findings for one certificate."""

    path: str
    kind: str
    workload: str
    ref: str
    gpu: str
    rules: tuple[RuleResult, ...]

    @property
    def status(self) -> Status:
        return _worst(r.status for r in self.rules)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "workload": self.workload,
                "ref": self.ref, "gpu": self.gpu, "status": self.status.value,
                "rules": [r.to_dict() for r in self.rules]}


@dataclass(frozen=True)
class GateReport:
    """Everything the gate found; renderers turn it into a table, JUnit, markdown, JSON."""

    created: str
    policy: Policy
    baseline: str | None
    certificates: tuple[CertificateResult, ...]
    checks: tuple[RuleResult, ...]  # rules over the whole set (require, baseline coverage)
    skipped_snapshots: int = 0

    @property
    def status(self) -> Status:
        return _worst([r.status for r in self.checks] + [c.status for c in self.certificates])

    @property
    def passed(self) -> bool:
        return self.status is not Status.FAIL

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def failures(self) -> list[tuple[str, RuleResult]]:
        """(subject, rule result) of every failed rule, in report order."""
        return [(s, r) for s, r in self._all() if r.status is Status.FAIL]

    def warnings(self) -> list[tuple[str, RuleResult]]:
        return [(s, r) for s, r in self._all() if r.status is Status.WARN]

    def _all(self) -> list[tuple[str, RuleResult]]:
        out = [("policy", r) for r in self.checks]
        for c in self.certificates:
            out += [(f"{c.workload} {c.kind} on {c.gpu}", r) for r in c.rules]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status.value, "passed": self.passed,
                "exit_code": self.exit_code, "created": self.created,
                "policy": self.policy.to_dict(), "baseline": self.baseline,
                "skipped_snapshots": self.skipped_snapshots,
                "checks": [r.to_dict() for r in self.checks],
                "certificates": [c.to_dict() for c in self.certificates]}


def _worst(statuses: Iterable[Status]) -> Status:
    found = set(statuses)
    for s in (Status.FAIL, Status.WARN):
        if s in found:
            return s
    return Status.PASS


class UnusableInput(GraphcertError):
    """The gate cannot judge: one line per problem, exit 2."""

    def __init__(self, problems: Sequence[str]):
        super().__init__(problems[0] if problems else "unusable input")
        self.problems = tuple(problems)


@dataclass(frozen=True)
class Loaded:
    """A certificate the gate accepted, with the path it shows."""

    path: str
    cert: Mapping[str, Any]

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.cert["kind"], self.cert["workload"]["ref"],
                self.cert["environment"]["gpu"]["name"])


def display_path(path: Path) -> str:
    """`path` relative to the current folder when it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def find_json_files(paths: Sequence[Path], exclude: Path | None = None
                    ) -> tuple[list[Path], list[str]]:
    """*.json files under `paths` (hidden folders and `exclude` skipped); missing paths."""
    files: list[Path] = []
    problems: list[str] = []
    skip = exclude.resolve() if exclude is not None else None
    for path in paths:
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            for found in sorted(path.rglob("*.json")):
                rel = found.relative_to(path).parts
                if any(p.startswith(".") for p in rel[:-1]):
                    continue
                if skip is not None and skip in found.resolve().parents:
                    continue
                files.append(found)
        else:
            problems.append(f"{path}: no such file or folder")
    seen: set[Path] = set()
    unique = []
    for f in files:
        if f.resolve() not in seen:
            seen.add(f.resolve())
            unique.append(f)
    return unique, problems


def load_all(paths: Sequence[Path], *, digest_of: DigestOf | None,
             exclude: Path | None = None) -> tuple[list[Loaded], int, list[str]]:
    """Load every certificate under `paths`: (accepted, snapshots skipped, problems)."""
    files, problems = find_json_files(paths, exclude)
    loaded: list[Loaded] = []
    snapshots = 0
    for f in files:
        try:
            doc = read_document(f)
            loaded.append(Loaded(display_path(f), check_document(doc, display_path(f),
                                                                 digest_of=digest_of)))
        except NotACertificate as exc:
            if exc.is_snapshot:
                snapshots += 1
            else:
                problems.append(exc.one_line())
        except CertificateError as exc:
            problems.append(exc.one_line())
    return loaded, snapshots, problems


def run_gate(paths: Sequence[Path], *, policy: Policy, baseline: Path | None = None,
             created: str, digest_of: DigestOf | None = None) -> GateReport:
    """Load, check the policy, compare with the baseline. Raises UnusableInput (exit 2)."""
    if not paths:
        raise UnusableInput(["no certificate paths given"])
    loaded, snapshots, problems = load_all(
        paths, digest_of=digest_of or memoized_digests(), exclude=baseline)
    base: list[Loaded] = []
    if baseline is not None:
        if not baseline.is_dir():
            problems.append(f"{baseline}: baseline folder does not exist")
        else:
            base, _, base_problems = load_all([baseline], digest_of=None)
            problems += [f"baseline {p}" for p in base_problems]
    problems += _duplicates(loaded, "") + _duplicates(base, "baseline ")
    if not problems and not loaded:
        problems.append(f"no certificates under {', '.join(map(str, paths))}")
    if problems:
        raise UnusableInput(problems)
    base_by_key = {b.key: b for b in base}
    results = []
    for item in sorted(loaded, key=lambda x: (x.cert["workload"]["name"], x.cert["kind"],
                                              x.key[2], x.path)):
        rules = _certificate_rules(item.cert, policy)
        if baseline is not None:
            rules += _baseline_rules(item.cert, base_by_key.get(item.key), policy)
        c = item.cert
        results.append(CertificateResult(item.path, c["kind"], c["workload"]["name"],
                                         c["workload"]["ref"], c["environment"]["gpu"]["name"],
                                         tuple(rules)))
    checks = _set_rules(loaded, base, policy, baseline is not None)
    return GateReport(created, policy, None if baseline is None else display_path(baseline),
                      tuple(results), tuple(checks), snapshots)


def _duplicates(items: Sequence[Loaded], prefix: str) -> list[str]:
    first: dict[tuple[str, str, str], str] = {}
    out = []
    for it in items:
        if it.key in first:
            kind, ref, gpu = it.key
            out.append(f"{prefix}{it.path}: a second {kind} certificate for workload {ref} on "
                       f"{gpu} (the first is {first[it.key]}); keep one")
        else:
            first[it.key] = it.path
    return out


def _certificate_rules(cert: Mapping[str, Any], policy: Policy) -> list[RuleResult]:
    verdict = cert["verdict"]
    name = cert["workload"]["name"]
    results = cert["results"]
    rules = [RuleResult(Rule.VERDICT, Status.PASS if verdict["passed"] else Status.FAIL,
                        "passed" if verdict["passed"] else "the certificate's verdict is fail",
                        tuple(verdict["reasons"]))]
    limit = policy.for_workload(policy.max_nodes, name)
    if limit is not None:
        rows = results["classes"] if cert["kind"] == "topology" else results["sizes"]
        label = "class" if cert["kind"] == "topology" else "n"
        key = "capacity" if cert["kind"] == "topology" else "n"
        over = [f"{label} {r[key]}: {r['node_count']} nodes > {limit}" for r in rows
                if r.get("node_count") is not None and r["node_count"] > limit]
        counts = [r["node_count"] for r in rows if r.get("node_count") is not None]
        most = max(counts) if counts else 0
        rules.append(RuleResult(Rule.MAX_NODES, Status.FAIL if over else Status.PASS,
                                f"{len(over)} over the limit of {limit} nodes" if over else
                                f"at most {most} nodes (limit {limit})", tuple(over)))
    floor = policy.for_workload(policy.min_speedup, name)
    if floor is not None and cert["kind"] == "bench":
        rules.append(_speedup_rule(results["sizes"], float(floor), policy.speedup_metric))
    return rules


def _speedup_rule(sizes: Sequence[Mapping[str, Any]], floor: float, metric: str) -> RuleResult:
    fails, warns, lowest = [], [], None
    for s in sizes:
        iv = s["speedup"].get(metric)
        if iv is None:
            warns.append(f"n={s['n']}: no {metric} speedup measured")
            continue
        lowest = iv["median"] if lowest is None else min(lowest, iv["median"])
        text = (f"n={s['n']}: {metric} speedup {iv['median']:.2f}x "
                f"[{iv['low']:.2f}, {iv['high']:.2f}]")
        if iv["high"] < floor:
            fails.append(f"{text} < {floor:g}x")
        elif iv["median"] < floor:
            warns.append(f"{text}: median below {floor:g}x, interval reaches it")
    status = Status.FAIL if fails else Status.WARN if warns else Status.PASS
    summary = (f"{len(fails)} size(s) below {floor:g}x {metric} speedup" if fails else
               f"lowest {metric} speedup {lowest:.2f}x (min {floor:g}x)" if lowest is not None
               else f"no {metric} speedup measured")
    return RuleResult(Rule.MIN_SPEEDUP, status, summary, tuple(fails + warns))


def _baseline_rules(cert: Mapping[str, Any], base: Loaded | None,
                    policy: Policy) -> list[RuleResult]:
    rule = Rule.TOPOLOGY if cert["kind"] == "topology" else Rule.REGRESSION
    if base is None:
        return [RuleResult(rule, Status.WARN, "no baseline certificate to compare with")]
    if cert["kind"] == "topology":
        classes = compare_topology(base.cert["results"], cert["results"])
        changed = [c for c in classes if c.change in ("topology", "shape")]
        other = [c.describe() for c in classes if c.change not in ("same", "topology", "shape")]
        if not changed:
            return [RuleResult(rule, Status.PASS,
                               f"{len(classes) - len(other)} class(es) unchanged against "
                               f"{base.path}", tuple(other))]
        status = Status.WARN if policy.allow_topology_change else Status.FAIL
        return [RuleResult(rule, status, f"{len(changed)} class(es) changed against {base.path}",
                           tuple(c.describe() for c in changed) + tuple(other))]
    comps, notes = compare_bench(base.cert["results"], cert["results"],
                                 min_noise=policy.min_noise)
    slower = [c for c in comps if c.change is Change.SLOWER and c.diff > policy.max_regression]
    ambiguous = [c for c in comps if c.change is Change.AMBIGUOUS]
    tally = {ch: sum(1 for c in comps if c.change is ch) for ch in Change}
    counts = ", ".join(f"{v} {ch.value}" for ch, v in tally.items() if v)
    if slower:
        return [RuleResult(rule, Status.FAIL, f"{len(slower)} timing(s) slower by more than "
                                              f"{policy.max_regression:.1%} against {base.path}",
                           tuple(c.describe() for c in slower + ambiguous) + tuple(notes))]
    status = Status.WARN if ambiguous else Status.PASS
    return [RuleResult(rule, status, f"{len(comps)} timing(s): {counts or 'none compared'}",
                       tuple(c.describe() for c in ambiguous) + tuple(notes))]


def _set_rules(loaded: Sequence[Loaded], base: Sequence[Loaded], policy: Policy,
               with_baseline: bool) -> list[RuleResult]:
    have = {(it.cert["workload"]["name"], it.cert["kind"]) for it in loaded}
    out = []
    if policy.require:
        missing = [f"{w}: no {k} certificate" for w, kinds in sorted(policy.require.items())
                   for k in kinds if (w, k) not in have]
        out.append(RuleResult(Rule.REQUIRE, Status.FAIL if missing else Status.PASS,
                              f"{len(missing)} required certificate(s) missing" if missing else
                              "all required certificates present", tuple(missing)))
    if policy.require_kinds:
        workloads = sorted({w for w, _ in have} | set(policy.require))
        missing = [f"{w}: no {k} certificate" for w in workloads for k in policy.require_kinds
                   if (w, k) not in have]
        out.append(RuleResult(Rule.REQUIRE_KINDS, Status.FAIL if missing else Status.PASS,
                              f"{len(missing)} required certificate(s) missing" if missing else
                              f"every workload has {', '.join(policy.require_kinds)}",
                              tuple(missing)))
    if with_baseline:
        current = {it.key for it in loaded}
        gone = [f"{k[1]} {k[0]} on {k[2]} ({b.path})" for b in base
                for k in [b.key] if k not in current]
        if gone:
            out.append(RuleResult(Rule.BASELINE, Status.WARN,
                                  f"{len(gone)} baseline certificate(s) have no current one",
                                  tuple(gone)))
    return out


def step_summary_path() -> Path | None:
    """$GITHUB_STEP_SUMMARY when set."""
    value = os.environ.get("GITHUB_STEP_SUMMARY")
    return Path(value) if value else None
