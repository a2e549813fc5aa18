"""When the gate cannot judge (exit 2: stale, tampered, unsigned or unreadable certificates,
a bad policy or key), `--json`, `--junit`, `--summary` and $GITHUB_STEP_SUMMARY are still
written, each listing every unusable input (issue 34 item 5); a bad output path is still
refused before anything is written. Certificates are synthetic (tests/_certfactory.py,
test_certificate.broken), except the recorded fleet fixture, which is stale on purpose."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from _certfactory import certificate
from click.testing import CliRunner, Result

from graphcert.cert.document import write_certificate
from graphcert.cli import cli
from tests.cert.test_certificate import REASONS, broken

ROOT = Path(__file__).resolve().parents[2]


def _gate(*args: str) -> Result:
    return CliRunner().invoke(cli, ["gate", *args], catch_exceptions=False)


def _errors(result: Result) -> list[str]:
    return [ln.removeprefix("graphcert: error: ") for ln in result.stderr.splitlines()
            if ln.startswith("graphcert: error: ")]


@pytest.fixture
def step(synthetic_cli: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A GitHub step summary with an earlier step's text in it."""
    path = synthetic_cli / "step.md"
    path.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
    return path


def _all_outputs(*args: str) -> tuple[Result, dict[str, Any], ET.Element, str]:
    result = _gate(*args, "--json", "--junit", "out/junit.xml", "--summary", "out/summary.md")
    return (result, json.loads(result.stdout), ET.parse("out/junit.xml").getroot(),
            Path("out/summary.md").read_text())


def _check_lists(problems: list[str], doc: dict[str, Any], junit: ET.Element,
                 summary: str, step: Path) -> None:
    """Every output names the same unusable inputs the stderr lines name, and no verdict."""
    assert problems
    assert (doc["status"], doc["passed"], doc["exit_code"]) == ("unusable", False, 2)
    assert doc["unusable"] == problems and doc["certificates"] == [] == doc["checks"]
    suite = junit.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("errors"), suite.get("failures")) == (
        str(len(problems)), str(len(problems)), "0")
    errors = [e.get("message") for e in suite.iter("error")]
    assert errors == problems
    assert summary.startswith("## graphcert gate: UNUSABLE\n")
    assert [ln.removeprefix("- ") for ln in summary.splitlines() if ln.startswith("- ")] == \
        problems
    assert step.read_text() == "earlier step\n" + summary + "\n"  # appended, not replaced


def test_stale_and_tampered_certificates_are_listed_everywhere(step: Path) -> None:
    Path("reports").mkdir()
    for kind in ("stale", "tampered"):
        broken(kind, Path("reports"))
    write_certificate(Path("reports/good.json"), certificate("bench"))
    result, doc, junit, summary = _all_outputs("reports")
    assert result.exit_code == 2
    problems = _errors(result)
    assert len(problems) == 2
    for kind in ("stale", "tampered"):
        assert sum(f"reports/{kind}.json" in p and REASONS[kind] in p for p in problems) == 1
    assert doc["policy"]["source"] == "defaults"
    _check_lists(problems, doc, junit, summary, step)


def test_unsigned_certificates_when_a_signature_is_required(step: Path) -> None:
    write_certificate(Path("reports/t.json"), certificate("topology"))
    result, doc, junit, summary = _all_outputs("reports", "--require-signature")
    assert result.exit_code == 2
    (problem,) = _errors(result)
    assert problem.startswith("reports/t.json: ") and "signature" in problem
    _check_lists([problem], doc, junit, summary, step)


def test_a_bad_policy_is_listed_too(step: Path) -> None:
    write_certificate(Path("reports/t.json"), certificate("topology"))
    Path("gate.toml").write_text("min_speedups = 5.0\n")
    result, doc, junit, summary = _all_outputs("reports", "--policy", "gate.toml")
    assert result.exit_code == 2
    (problem,) = _errors(result)
    assert problem.startswith("policy gate.toml: unknown key 'min_speedups'")
    assert doc["policy"] is None  # it could not be read
    _check_lists([problem], doc, junit, summary, step)
    # a per-workload entry naming no workload is refused after loading: listed the same way
    Path("gate.toml").write_text('min_speedup = { scna = 2.0 }\n')
    result, doc, junit, summary = _all_outputs("reports", "--policy", "gate.toml")
    (problem,) = _errors(result)
    assert "scna" in problem and doc["policy"]["source"] == "gate.toml"
    assert doc["unusable"] == [problem]


def test_a_bad_signing_key_file_is_listed_too(step: Path) -> None:
    write_certificate(Path("reports/t.json"), certificate("topology"))
    result, doc, junit, summary = _all_outputs("reports", "--signing-key-file", "no-key")
    assert result.exit_code == 2
    (problem,) = _errors(result)
    assert problem.startswith("signing key file no-key")
    _check_lists([problem], doc, junit, summary, step)


def test_the_recorded_stale_fleet(step: Path) -> None:
    """Recorded certificates made with an older method: each is named in every output."""
    fleet = ROOT / "tests" / "fixtures" / "fleet"
    result, doc, junit, summary = _all_outputs(str(fleet))
    assert result.exit_code == 2
    problems = _errors(result)
    named = sorted(p.name for p in fleet.glob("*.json"))
    assert sorted(Path(p.split(": ")[0]).name for p in problems) == named
    _check_lists(problems, doc, junit, summary, step)


def test_the_table_prints_nothing_on_stdout_when_unusable(synthetic_cli: Path) -> None:
    broken("stale", synthetic_cli)
    result = _gate("stale.json")
    assert (result.exit_code, result.stdout) == (2, "")
    assert len(_errors(result)) == 1


def test_a_bad_output_path_is_refused_before_anything_is_written(step: Path) -> None:
    broken("stale", Path("."))
    Path("taken").mkdir()
    result = _gate("stale.json", "--json", "--junit", "taken", "--summary", "out/summary.md")
    assert result.exit_code == 2 and result.stdout == ""
    assert "--junit" in result.stderr
    assert not Path("out").exists() and step.read_text() == "earlier step\n"


def test_every_format_renders_an_unusable_report_and_cleans_its_text() -> None:
    """Synthetic problems, one carrying a terminal escape a certificate could smuggle in."""
    from graphcert.gate import UnusableReport
    from graphcert.render.report import OutputFormat, render

    report = UnusableReport("2026-01-01T00:00:00Z", None, "base",
                            ("a.json: stale (synthetic)", "b.json: \x1b[31mred\x1b[0m"))
    texts = {fmt: render(report, fmt) for fmt in OutputFormat}
    assert all("\x1b" not in t for t in texts.values())
    assert texts[OutputFormat.TABLE].splitlines() == [
        "graphcert: error: a.json: stale (synthetic)", "graphcert: error: b.json: red",
        "gate: UNUSABLE (2 unusable inputs)"]
    assert json.loads(texts[OutputFormat.JSON])["baseline"] == "base"
    assert "policy: unreadable · baseline: `base`" in texts[OutputFormat.MARKDOWN]
