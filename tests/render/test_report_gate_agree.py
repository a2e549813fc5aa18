"""`graphcert report` states the verdict `graphcert gate` gives for the same paths and
options: both run the gate through one call with the same inputs (policy, source and method
digests, signing key, --require-signature), stale, tampered, unsigned and wrongly signed
inputs included (issue 29 item 6, held by issue 34 item 4). Recorded certificates of reports/
and tests/fixtures/fleet, some copied and edited or re-signed with synthetic keys."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from graphcert.cert.document import compute_digest, write_certificate
from graphcert.cert.signing import SigningKey
from graphcert.cli import cli

ROOT = Path(__file__).resolve().parents[2]
REPORTS = str(ROOT / "reports")
FLEET = str(ROOT / "tests" / "fixtures" / "fleet")  # recorded with an older method: stale


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _gate_verdict(result: Result) -> str:
    """'unusable' (exit 2), else the gate's status word from its last line."""
    if result.exit_code == 2:
        return "unusable"
    return re.findall(r"gate: (PASS|WARN|FAIL)", result.output)[-1]


def _report_verdict(result: Result) -> str:
    if result.exit_code == 2:
        return "unusable"
    return re.findall(r"gate (PASS|WARN|FAIL)\)", result.stderr)[-1]


KEY = "synthetic-test-key-0123456789abcdef"
OTHER_KEY = "another-synthetic-key-0123456789abcd"


def _method_stale(folder: Path) -> str:
    """A recorded certificate whose sources are current but whose recorded method digest is
    not graphcert's (as after a harness change): stale for the gate, unless told to warn."""
    doc = json.loads((ROOT / "reports" / "topology-scan-NVIDIA_H200.json").read_text())
    doc["workload"]["method_digest"] = "0" * 64
    doc["digest"] = compute_digest(doc)
    (folder / "stale").mkdir()
    (folder / "stale" / "t.json").write_text(json.dumps(doc))
    return str(folder / "stale")


def _signed_with_another_key(folder: Path) -> str:
    """A recorded certificate signed with a key other than the one the environment gives."""
    doc = json.loads((ROOT / "reports" / "topology-scan-NVIDIA_H200.json").read_text())
    other = SigningKey(OTHER_KEY.encode(), "a test")
    write_certificate(folder / "signed" / "t.json", doc, key=other)
    return str(folder / "signed")


def _copy(folder: Path, key: SigningKey | None = None) -> Path:
    """Every recorded certificate of reports/ written again under `folder` (signed with
    `key`, when given: the content is the recorded one)."""
    for path in sorted((ROOT / "reports").glob("*.json")):
        write_certificate(folder / path.name, json.loads(path.read_text()), key=key)
    return folder


def _policy(folder: Path, text: str) -> str:
    path = folder / "gate.toml"
    path.write_text(text)
    return str(path)


Case = tuple[list[str], str, str | None]  # (paths and options, the verdict both give, key)


def _recorded(tmp: Path) -> Case:
    return [REPORTS], "PASS", None


def _stale_fleet(tmp: Path) -> Case:
    return [FLEET], "unusable", None


def _unsigned_required(tmp: Path) -> Case:
    return [REPORTS, "--require-signature"], "unusable", None


def _unsigned_required_by_policy(tmp: Path) -> Case:
    return [str(_copy(tmp / "r")), "--policy", _policy(tmp, "require_signature = true\n")], \
        "unusable", None


def _signed_required(tmp: Path) -> Case:
    return [str(_copy(tmp / "r", SigningKey(KEY.encode(), "a test"))), "--require-signature"], \
        "PASS", KEY


def _signed_wrong_key(tmp: Path) -> Case:
    return [_signed_with_another_key(tmp)], "unusable", KEY


def _tampered(tmp: Path) -> Case:
    folder = _copy(tmp / "r")
    target = folder / "bench-scan-NVIDIA_H200.json"
    doc = json.loads(target.read_text())
    doc["verdict"]["reasons"] = ["edited by hand (synthetic)"]  # the digest no longer matches
    target.write_text(json.dumps(doc))
    return [str(folder)], "unusable", None


def _method_stale_case(tmp: Path) -> Case:
    return [_method_stale(tmp)], "unusable", None


def _method_stale_warned(tmp: Path) -> Case:
    return [_method_stale(tmp), "--policy", _policy(tmp, 'method_change = "warn"\n')], \
        "WARN", None


def _baseline_itself(tmp: Path) -> Case:
    return [REPORTS, "--baseline", REPORTS], "PASS", None


def _baseline_copy(tmp: Path) -> Case:
    return [REPORTS, "--baseline", str(_copy(tmp / "base"))], "PASS", None


def _failing_floor(tmp: Path) -> Case:
    return [REPORTS, "--policy", _policy(tmp, "min_speedup = 1000.0\n")], "FAIL", None


def _baseline_not_covered(tmp: Path) -> Case:
    """One current certificate against the whole recorded set: the others warn."""
    (tmp / "one").mkdir()
    name = "topology-scan-NVIDIA_H200.json"
    (tmp / "one" / name).write_bytes((ROOT / "reports" / name).read_bytes())
    return [str(tmp / "one"), "--baseline", REPORTS, "--policy", _policy(tmp, "")], "WARN", None


def _bad_policy(tmp: Path) -> Case:
    return [REPORTS, "--policy", _policy(tmp, "min_speedups = 2.0\n")], "unusable", None


CASES = [_recorded, _stale_fleet, _unsigned_required, _unsigned_required_by_policy,
         _signed_required, _signed_wrong_key, _tampered, _method_stale_case,
         _method_stale_warned, _baseline_itself, _baseline_copy, _failing_floor,
         _baseline_not_covered, _bad_policy]


@pytest.mark.parametrize("make", CASES, ids=[c.__name__.strip("_") for c in CASES])
def test_report_states_the_gates_verdict(make: Callable[[Path], Case], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Both commands over the same paths and options give one verdict, and it is the one
    the case is built to give (so agreeing on a wrong answer fails too)."""
    monkeypatch.chdir(ROOT)  # the policy in ./pyproject.toml, for both
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("GRAPHCERT_SIGNING_KEY_FILE", raising=False)
    args, expected, key = make(tmp_path)
    if key is None:
        monkeypatch.delenv("GRAPHCERT_SIGNING_KEY", raising=False)
    else:
        monkeypatch.setenv("GRAPHCERT_SIGNING_KEY", key)
    gate = _run("gate", *args)
    report = _run("report", *args, "-o", str(tmp_path / "r.html"))
    assert (_gate_verdict(gate), _report_verdict(report)) == (expected, expected), (
        gate.output[-600:], report.stderr[-600:])
    # exit 2 writes no page (nothing half-written stands for a verdict), and both name the
    # same unusable inputs
    assert (tmp_path / "r.html").exists() == (expected != "unusable")
    errors = [[ln for ln in r.stderr.splitlines() if ln.startswith("graphcert: error: ")]
              for r in (gate, report)]
    assert errors[0] == errors[1] and bool(errors[0]) == (expected == "unusable")


def test_the_cases_cover_each_outcome(tmp_path: Path) -> None:
    """The cases are not all alike: each verdict the gate can give is among them."""
    outcomes = set()
    for make in CASES:
        folder = tmp_path / make.__name__
        folder.mkdir()
        outcomes.add(make(folder)[1])
    assert outcomes == {"PASS", "WARN", "FAIL", "unusable"}
