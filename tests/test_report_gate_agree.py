"""`graphcert report` states the verdict `graphcert gate` gives for the same paths and
options: both run the gate through one call with the same inputs (policy, source and method
digests, signing key, --require-signature), stale and unsigned inputs included."""

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

ROOT = Path(__file__).resolve().parent.parent
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
    doc = json.loads((ROOT / "reports" / "topology-scan-NVIDIA_H100_80GB_HBM3.json").read_text())
    doc["workload"]["method_digest"] = "0" * 64
    doc["digest"] = compute_digest(doc)
    (folder / "stale").mkdir()
    (folder / "stale" / "t.json").write_text(json.dumps(doc))
    return str(folder / "stale")


def _signed_with_another_key(folder: Path) -> str:
    """A recorded certificate signed with a key other than the one the environment gives."""
    doc = json.loads((ROOT / "reports" / "topology-scan-NVIDIA_H100_80GB_HBM3.json").read_text())
    other = SigningKey(OTHER_KEY.encode(), "a test")
    write_certificate(folder / "signed" / "t.json", doc, key=other)
    return str(folder / "signed")


@pytest.mark.parametrize(("make", "options"), [
    (_method_stale, []),
    (_signed_with_another_key, []),
], ids=["stale-method-only", "signed-with-another-key"])
def test_report_checks_what_the_gate_checks(make: Callable[[Path], str], options: list[str],
                                            tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The two inputs the report once did not take (graphcert's method digest, the signing
    key): each makes the gate refuse, and the report too."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("GRAPHCERT_SIGNING_KEY_FILE", raising=False)
    monkeypatch.setenv("GRAPHCERT_SIGNING_KEY", KEY)
    folder = make(tmp_path)
    gate = _run("gate", folder, *options)
    report = _run("report", folder, *options, "-o", str(tmp_path / "r.html"))
    assert _gate_verdict(gate) == "unusable", gate.output[-600:]
    assert _report_verdict(report) == "unusable", report.stderr[-600:]


@pytest.mark.parametrize(("paths", "options"), [
    ([REPORTS], []),
    ([FLEET], []),
    ([REPORTS], ["--require-signature"]),
    ([REPORTS], ["--baseline", REPORTS]),
], ids=["recorded", "stale-method", "unsigned-required", "baseline"])
def test_report_states_the_gates_verdict(paths: list[str], options: list[str],
                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    monkeypatch.chdir(ROOT)  # the policy in ./pyproject.toml, for both
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("GRAPHCERT_SIGNING_KEY", raising=False)
    monkeypatch.delenv("GRAPHCERT_SIGNING_KEY_FILE", raising=False)
    gate = _run("gate", *paths, *options)
    report = _run("report", *paths, *options, "-o", str(tmp_path / "r.html"))
    assert _gate_verdict(gate) == _report_verdict(report), (gate.output[-600:],
                                                            report.stderr[-600:])


def test_the_cases_cover_each_outcome(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cases above are not all alike: the stale fleet and the unsigned reports are
    unusable for both, the recorded reports are not."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert _gate_verdict(_run("gate", FLEET)) == "unusable"
    assert _gate_verdict(_run("gate", REPORTS, "--require-signature")) == "unusable"
    assert _gate_verdict(_run("gate", REPORTS)) in ("PASS", "WARN")
