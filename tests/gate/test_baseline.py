"""A baseline that matches nothing is an error unless the policy allows it; a baseline that
is a file says so. Certificates are synthetic (tests/_certfactory.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _certfactory import certificate
from click.testing import CliRunner, Result

from graphcert.cert.document import write_certificate
from graphcert.cli import cli


@pytest.fixture(autouse=True)
def env(synthetic_cli: Path) -> None:
    write_certificate(Path("reports/topology-scan.json"), certificate("topology"))
    write_certificate(Path("reports/bench-scan.json"), certificate("bench"))


def gate(*args: str) -> Result:
    return CliRunner().invoke(cli, ["gate", "reports", *args], catch_exceptions=False)


def test_empty_baseline_folder_is_an_error() -> None:
    Path("base").mkdir()
    result = gate("--baseline", "base")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "graphcert: error: base: the baseline folder holds no certificates, so nothing would "
        "be compared (set allow_empty_baseline = true in the policy to allow it)")


def test_baseline_of_snapshots_only_is_empty_too() -> None:
    Path("base").mkdir()
    Path("base/s.json").write_text('{"kind": "graphcert.snapshot"}')
    assert gate("--baseline", "base").exit_code == 2


def test_policy_can_allow_an_empty_baseline() -> None:
    Path("base").mkdir()
    Path("gate.toml").write_text("allow_empty_baseline = true\n")
    result = gate("--baseline", "base", "--policy", "gate.toml")
    assert result.exit_code == 0, result.output
    assert "no baseline certificate to compare with" in result.stdout


def test_baseline_that_is_a_file_says_so() -> None:
    result = gate("--baseline", "reports/bench-scan.json")
    assert result.exit_code == 2
    assert "reports/bench-scan.json: the baseline is a file; give the folder" in result.stderr


def test_baseline_that_is_missing() -> None:
    result = gate("--baseline", "nowhere")
    assert result.exit_code == 2 and "nowhere: baseline folder does not exist" in result.stderr


def test_policy_rejects_a_non_boolean_allow_empty_baseline() -> None:
    Path("gate.toml").write_text('allow_empty_baseline = "yes"\n')
    result = gate("--policy", "gate.toml")
    assert result.exit_code == 2 and "allow_empty_baseline must be true or false" in \
        result.stderr
