"""The CI gate's run and report: load certificates, apply the rules, collect the findings.

Pure and import-light (no numpy, no CUDA): `graphcert gate` must start fast on any machine.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import across_models
from graphcert.cert.document import CertificateError, NotACertificate
from graphcert.cert.signing import SigningKey
from graphcert.cert.store import (
    DigestOf,
    MethodOf,
    check_document,
    memoized_digests,
    method_changed,
    read_document,
)
from graphcert.errors import ExitStatus, GraphcertError
from graphcert.fileio import is_temp_name
from graphcert.fileread import is_stream, kind_of, shown
from graphcert.gate.fleet import cross_gpu_rules, gpu_labels, gpu_name_conflicts
from graphcert.gate.policy import Policy, check_workload_names
from graphcert.gate.rules import (
    Loaded,
    RuleResult,
    RuleStatus,
    baseline_rules,
    certificate_rules,
    set_rules,
)
from graphcert.jsontypes import JSONObject


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
    def status(self) -> RuleStatus:
        return _worst(r.status for r in self.rules)

    def to_dict(self) -> JSONObject:
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
    def status(self) -> RuleStatus:
        return _worst([r.status for r in self.checks] + [c.status for c in self.certificates])

    @property
    def passed(self) -> bool:
        return self.status is not RuleStatus.FAIL

    @property
    def exit_code(self) -> int:
        return ExitStatus.OK if self.passed else ExitStatus.FAILED

    def failures(self) -> list[tuple[str, RuleResult]]:
        """(subject, rule result) of every failed rule, in report order."""
        return [(s, r) for s, r in self._all() if r.status is RuleStatus.FAIL]

    def warnings(self) -> list[tuple[str, RuleResult]]:
        return [(s, r) for s, r in self._all() if r.status is RuleStatus.WARN]

    def _all(self) -> list[tuple[str, RuleResult]]:
        out = [("policy", r) for r in self.checks]
        for c in self.certificates:
            out += [(f"{c.workload} {c.kind} on {c.gpu}", r) for r in c.rules]
        return out

    def to_dict(self) -> JSONObject:
        return {"status": self.status.value, "passed": self.passed,
                "exit_code": self.exit_code, "created": self.created,
                "policy": self.policy.to_dict(), "baseline": self.baseline,
                "skipped_snapshots": self.skipped_snapshots,
                "unusable": [],  # as in an UnusableReport: one schema for every exit
                "checks": [r.to_dict() for r in self.checks],
                "certificates": [c.to_dict() for c in self.certificates]}


def _worst(statuses: Iterable[RuleStatus]) -> RuleStatus:
    found = set(statuses)
    for s in (RuleStatus.FAIL, RuleStatus.WARN):
        if s in found:
            return s
    return RuleStatus.PASS


class UnusableInput(GraphcertError):
    """The gate cannot judge: one line per problem, exit 2."""

    def __init__(self, problems: Sequence[str]):
        super().__init__(problems[0] if problems else "unusable input")
        self.problems = tuple(problems)


def display_path(path: Path) -> str:
    """`path` relative to the current folder when it is below it."""
    try:  # the folder resolved, not the file: a file may be a symlink loop
        return str((path.parent.resolve() / path.name).relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):
        return str(path)


def _safe_resolve(path: Path) -> Path | None:
    """`path` resolved, or None for a symlink loop or an unreadable link."""
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None


def _regular(path: Path, problems: list[str]) -> bool:
    """True for a regular file (or a link to one). A FIFO, device or socket found in a
    folder is named, never opened: reading one could hang or never end."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return True  # a broken link or loop: find_json_files names it
    if stat.S_ISREG(mode):
        return True
    via = " (through a symlink)" if os.path.islink(path) else ""
    problems.append(f"{display_path(path)}: is {kind_of(mode)}{via}, not a regular file; the "
                    f"gate reads only regular files in a folder (remove it)")
    return False


def _walk_json(root: Path, skip: Path | None, problems: list[str]) -> list[Path]:
    """*.json under `root`, without following links to folders (no loops), skipping hidden
    folders, graphcert's temp files (of interrupted writes) and `skip`. Other names that
    start with a dot are certificates like any other: a failing one must not hide."""
    found: list[Path] = []

    def onerror(exc: OSError) -> None:
        problems.append(f"{exc.filename}: cannot be listed: {exc.strerror or exc}")

    for folder, dirs, files in os.walk(root, onerror=onerror):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        here = Path(folder)
        if skip is not None and (here.resolve() == skip or skip in here.resolve().parents):
            dirs[:] = []
            continue
        for name in sorted(files):
            if name.endswith(".json") and not is_temp_name(name) and _regular(here / name,
                                                                               problems):
                found.append(here / name)
    return found


def find_json_files(paths: Sequence[Path], exclude: Path | None = None
                    ) -> tuple[list[Path], list[str]]:
    """*.json files under `paths` (hidden folders, graphcert's temp files and `exclude`, where
    it lies inside a folder of `paths`, skipped); problems (missing paths, symlink loops,
    unreadable folders, special files in a folder). A path named in `paths` may be a FIFO or
    device: read_document bounds it."""
    files: list[Path] = []
    problems: list[str] = []
    skip = _safe_resolve(exclude) if exclude is not None else None
    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError) as exc:
            problems.append(_missing(path, exc))
            continue
        if stat.S_ISDIR(mode):
            files += _walk_json(path, _inside(skip, path), problems)
        elif stat.S_ISREG(mode) or is_stream(mode):
            files.append(path)
        else:
            problems.append(f"{shown(path)}: is {kind_of(mode)}, not a certificate file or a "
                            f"folder")
    seen: set[Path] = set()
    unique = []
    for f in files:
        real = _safe_resolve(f)
        if real is None:
            problems.append(f"{display_path(f)}: a broken symlink or a symlink loop")
        elif real not in seen:
            seen.add(real)
            unique.append(f)
    return unique, problems


def _inside(skip: Path | None, root: Path) -> Path | None:
    """`skip` when it lies strictly inside `root` (a baseline kept below the gated folder),
    else None: a baseline that is `root` itself or holds it is read as its own set, so
    comparing a folder with itself leaves the folder gated, not empty."""
    real = _safe_resolve(root)
    return skip if skip is not None and real is not None and real in skip.parents else None


def _missing(path: Path, exc: OSError | ValueError) -> str:
    """Why a path on the command line cannot be opened, in a few words."""
    if os.path.islink(path):
        return f"{shown(path)}: a broken symlink or a symlink loop"
    if isinstance(exc, FileNotFoundError):
        return f"{shown(path)}: no such file or folder"
    return f"{shown(path)}: cannot be read: {getattr(exc, 'strerror', None) or exc}"


def load_all(paths: Sequence[Path], *, digest_of: DigestOf | None,
             exclude: Path | None = None, trust: Trust | None = None
             ) -> tuple[list[Loaded], int, list[str]]:
    """Load every certificate under `paths`: (accepted, snapshots skipped, problems)."""
    files, problems = find_json_files(paths, exclude)
    named = set(paths)  # a FIFO or device is read only when named, never one found in a folder
    trust = trust or Trust()
    loaded: list[Loaded] = []
    snapshots = 0
    for f in files:
        try:
            doc = read_document(f, named=f in named)
            shown = display_path(f)  # once: it resolves the folder and the current one
            cert = check_document(doc, shown, digest_of=digest_of,
                                  method_of=trust.method_of, method_change=trust.method_change,
                                  key=trust.key, require_signature=trust.require_signature)
            changed = digest_of is not None and method_changed(cert, trust.method_of)
            loaded.append(Loaded(shown, cert, method_changed=changed))
        except NotACertificate as exc:
            if exc.is_snapshot:
                snapshots += 1
            else:
                problems.append(exc.one_line())
        except CertificateError as exc:
            problems.append(exc.one_line())
    return loaded, snapshots, problems


@dataclass(frozen=True)
class Trust:
    """What the gate requires of each certificate beyond soundness: how a changed method
    counts, the signing key, and whether a signature is required."""

    method_of: MethodOf | None = None
    method_change: str = "stale"
    key: SigningKey | None = None
    require_signature: bool = False


def run_gate(paths: Sequence[Path], *, policy: Policy, baseline: Path | None = None,
             created: str, digest_of: DigestOf | None,
             method_of: MethodOf | None = None, key: SigningKey | None = None,
             require_signature: bool = False) -> GateReport:
    """Load, check the policy, compare with the baseline. Raises UnusableInput (exit 2).
    `digest_of(ref)` gives a workload's source digest now (None: skip the staleness check);
    `method_of(kind)` graphcert's method digest now (None: skip that check). Both are
    passed in by the command: this pure layer never imports workloads."""
    return gate_run(paths, policy=policy, baseline=baseline, created=created,
                    digest_of=digest_of, method_of=method_of, key=key,
                    require_signature=require_signature).report


@dataclass(frozen=True)
class GateRun:
    """The gate's report and the typed certificates it judged (by the path the report
    shows), so a page of the report draws them without reading a file again."""

    report: GateReport
    certificates: Mapping[str, Certificate]


def gate_run(paths: Sequence[Path], *, policy: Policy, baseline: Path | None = None,
             created: str, digest_of: DigestOf | None,
             method_of: MethodOf | None = None, key: SigningKey | None = None,
             require_signature: bool = False) -> GateRun:
    """run_gate, with the certificates it loaded (each typed once, by the loader)."""
    if not paths:
        raise UnusableInput(["no certificate paths given"])
    trust = Trust(memoized_digests(method_of) if method_of else None, policy.method_change, key,
                  require_signature or policy.require_signature)
    loaded, snapshots, problems = load_all(
        paths, digest_of=memoized_digests(digest_of) if digest_of else None, exclude=baseline,
        trust=trust)
    base: list[Loaded] = []
    if baseline is not None:
        base, base_problems = _load_baseline(baseline, policy, trust)
        problems += base_problems
    problems += _duplicates(loaded, "") + _duplicates(base, "baseline ")
    problems += gpu_name_conflicts([*loaded, *base])
    if not problems and not loaded:
        problems.append(f"no certificates under {', '.join(map(str, paths))}")
    if problems:
        raise UnusableInput(problems)
    # a per-workload entry no certificate here matches is a typo, refused before any verdict
    check_workload_names(policy, {it.cert.workload.name for it in loaded}
                         | {it.cert.workload.ref for it in loaded})
    labels = gpu_labels(loaded)
    results = []
    # A baseline speaks for the kinds it holds: one of profile certificates alone (reports/
    # .baseline/) compares the profiles and says nothing of bench or topology certificates.
    # An empty one (allow_empty_baseline) holds no kind: every certificate says it had none.
    base_kinds = {b.cert.kind for b in base}
    for item in sorted(loaded, key=lambda x: (x.cert.workload.name, x.cert.kind, x.key[2],
                                              x.path)):
        rules = certificate_rules(item.cert, policy, method_changed=item.method_changed)
        if baseline is not None and (not base_kinds or item.cert.kind in base_kinds):
            rules += baseline_rules(item.cert, baseline_for(item, base), policy,
                                    other_model=_of_another_model(item, base))
        c = item.cert
        results.append(CertificateResult(item.path, c.kind, c.workload.name, c.workload.ref,
                                         labels[item.path], tuple(rules)))
    checks = set_rules(loaded, base, policy, baseline is not None)
    checks += cross_gpu_rules(loaded, policy)
    report = GateReport(created, policy, None if baseline is None else display_path(baseline),
                        tuple(results), tuple(checks), snapshots)
    return GateRun(report, {it.path: it.cert for it in loaded})


def _load_baseline(baseline: Path, policy: Policy, trust: Trust
                   ) -> tuple[list[Loaded], list[str]]:
    """The baseline's certificates (not checked for staleness: they are old on purpose)."""
    try:
        mode = os.stat(baseline).st_mode
    except FileNotFoundError:
        return [], [f"{shown(baseline)}: baseline folder does not exist"]
    except (OSError, ValueError) as exc:
        return [], [f"baseline {_missing(baseline, exc)}"]
    if not stat.S_ISDIR(mode):
        what = "a file" if stat.S_ISREG(mode) else kind_of(mode)
        return [], [f"{shown(baseline)}: the baseline is {what}; give the folder that holds "
                    f"the baseline certificates"]
    base_trust = Trust(None, "warn", trust.key, trust.require_signature)
    base, _, problems = load_all([baseline], digest_of=None, trust=base_trust)
    problems = [f"baseline {p}" for p in problems]
    if not base and not problems and not policy.allow_empty_baseline:
        problems.append(f"{baseline}: the baseline folder holds no certificates, so nothing "
                        f"would be compared (set allow_empty_baseline = true in the policy "
                        f"to allow it)")
    return base, problems


def baseline_for(item: Loaded, base: Sequence[Loaded]) -> Loaded | None:
    """The baseline certificate `item` is compared with: of its kind and workload and of the
    same GPU model (cert.compare.across_models, the rule `diff` warns by), the same physical
    GPU (UUID) when the baseline has it, else the first of that model by path."""
    same_model = sorted((b for b in base if b.key[:2] == item.key[:2]
                         and across_models(b.cert, item.cert) is None), key=lambda b: b.path)
    same_gpu = [b for b in same_model if b.identity == item.identity]
    found = same_gpu or same_model
    return found[0] if found else None


def _of_another_model(item: Loaded, base: Sequence[Loaded]) -> Loaded | None:
    """The first baseline certificate of `item`'s kind and workload from another GPU model."""
    return next((b for b in sorted(base, key=lambda b: b.path)
                 if b.key[:2] == item.key[:2] and across_models(b.cert, item.cert)), None)


def _duplicates(items: Sequence[Loaded], prefix: str) -> list[str]:
    """Two certificates of one kind and workload from one GPU (one UUID; GPUs of one model
    with different UUIDs are a fleet, not duplicates)."""
    first: dict[tuple[str, str, str, str], str] = {}
    out = []
    for it in items:
        if it.identity in first:
            kind, ref, gpu, _ = it.identity
            out.append(f"{prefix}{it.path}: a second {kind} certificate for workload {ref} on "
                       f"{gpu} (the first is {first[it.identity]}); keep one")
        else:
            first[it.identity] = it.path
    return out
