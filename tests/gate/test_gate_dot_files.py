"""Issue 28 item 11: a certificate whose name starts with a dot is gated like any other (a
failing one used to be skipped silently); only graphcert's own temp files are skipped."""

from __future__ import annotations

from pathlib import Path

import pytest
from _certfactory import certificate
from click.testing import CliRunner

from graphcert.cert.document import write_certificate
from graphcert.cli import cli

pytestmark = pytest.mark.usefixtures("synthetic_cli")


def test_a_failing_dot_named_certificate_fails_the_gate(tmp_path: Path) -> None:
    write_certificate(tmp_path / "reports" / "t.json", certificate("topology"))
    write_certificate(tmp_path / "reports" / ".b.json", certificate("bench", passed=False))
    result = CliRunner().invoke(cli, ["gate", "reports", "--json"])
    assert result.exit_code == 1, result.output
    assert "reports/.b.json" in result.stdout


def test_a_corrupt_dot_named_certificate_is_unusable_input(tmp_path: Path) -> None:
    write_certificate(tmp_path / "reports" / "t.json", certificate("topology"))
    (tmp_path / "reports" / ".x.json").write_text("{not json")
    result = CliRunner().invoke(cli, ["gate", "reports"])
    assert result.exit_code == 2
    assert result.stderr.startswith("graphcert: error: reports/.x.json: not JSON")


def test_graphcert_temp_files_are_still_skipped(tmp_path: Path) -> None:
    write_certificate(tmp_path / "reports" / "t.json", certificate("topology"))
    (tmp_path / "reports" / ".t.json.123.abcd1234.tmp").write_text("{half")
    (tmp_path / "reports" / ".t.json.tmp.json").write_text("{half")  # not a temp name
    result = CliRunner().invoke(cli, ["gate", "reports"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "graphcert: error: reports/.t.json.tmp.json: not JSON (Expecting property name "
        "enclosed in double quotes at line 1 column 2)"]
