"""Issue 28 item 11: an empty path is refused by every command that takes a path (click
reads '' as the current folder: `graphcert gate ''` gated it and passed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _certfactory import certificate
from click.testing import CliRunner

from graphcert.cert.document import write_certificate
from graphcert.cli import cli

pytestmark = pytest.mark.usefixtures("synthetic_cli")


@pytest.mark.parametrize("args,label", [
    (["gate", ""], "PATHS"),
    (["gate", "reports", ""], "PATHS"),
    (["gate", "reports", "--baseline", ""], "--baseline"),
    (["gate", "reports", "--policy", ""], "--policy"),
    (["gate", "reports", "--junit", ""], "--junit"),
    (["gate", "reports", "--summary", ""], "--summary"),
    (["gate", "reports", "--signing-key-file", ""], "--signing-key-file"),
    (["show", ""], "CERT"),
    (["diff", "", "reports/t.json"], "A"),
    (["diff", "reports/t.json", ""], "B"),
    (["report", ""], "PATHS"),
    (["report", "reports", "-o", ""], "-o"),
    (["verify", "chain", "--out", ""], "--out"),
    (["bench", "chain", "--out", ""], "--out"),
    (["bench", "chain", "--plot", ""], "--plot"),
    (["capture", "chain", "--out", ""], "--out"),
])
def test_empty_path_is_one_line(tmp_path: Path, args: list[str], label: str) -> None:
    write_certificate(tmp_path / "reports" / "t.json", certificate("topology"))
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"graphcert: error: {label} is an empty path (give a file or folder path)"]
    assert result.stdout == ""
