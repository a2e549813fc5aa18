"""Output piped to another program never folds a token: paths and hashes stay whole.

The gate runs as a user would (`graphcert gate reports/ | grep ...`): a real pipe, COLUMNS=80.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.table import Table

from graphcert.render.console import DataConsole
from tests._env import committed_report

ROOT = Path(__file__).resolve().parents[2]
# the committed chain bench certificate: reports/bench-chain-<GPU model>.json, a long token
WIDE_PATH = committed_report("bench", "chain").relative_to(ROOT).as_posix()


def _piped(*args: str, columns: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    if columns is not None:
        env["COLUMNS"] = columns
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "graphcert", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("columns", ["80", None])
def test_piped_gate_keeps_every_path_whole(columns: str | None) -> None:
    reports = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "reports").glob("*.json"))
    result = _piped("gate", "reports/", columns=columns)
    assert result.returncode in (0, 1), result.stderr
    lines = result.stdout.splitlines()
    assert any(WIDE_PATH in line for line in lines), result.stdout
    for path in reports:
        assert sum(path in line for line in lines) == 1, path  # one table row each
    # one row per certificate: nothing folded onto a continuation line
    assert sum(line.startswith(("PASS", "FAIL", "WARN")) for line in lines) == len(reports)


def test_columns_wider_than_the_content_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "150")
    table = Table("a", "b", expand=True)  # fills the width it is given
    table.add_row("x" * 10, "y")
    out = io.StringIO()
    DataConsole(file=out, color_system=None, force_terminal=False).print(table)
    assert {len(line) for line in out.getvalue().splitlines()} == {150}


def test_a_token_longer_than_columns_is_not_split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    token = "f" * 64  # a sha256 hex digest
    table = Table("hash", "file", box=None)
    table.add_row(token, "reports/topology-converge-NVIDIA_H200.json")
    out = io.StringIO()
    DataConsole(file=out, color_system=None, force_terminal=False).print(table)
    text = out.getvalue()
    assert token in text and "reports/topology-converge-NVIDIA_H200.json" in text
    assert len(text.splitlines()) == 2  # header, one row: nothing folded


def test_messages_on_stderr_keep_a_path_whole(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A certificate path in a stderr message is not split when stderr is not a terminal
    (seen on a GPU machine: 'certificate: ' and the path on two lines)."""
    from graphcert.render.console import data_console

    monkeypatch.setenv("COLUMNS", "40")
    path = "/root/out/w/reports/topology-torch_decode-NVIDIA_H100_80GB_HBM3.json"
    # a console made now, as an invocation makes it, writing to the captured stderr
    data_console(stderr=True, environ=os.environ).print(f"certificate: {path}")
    assert f"certificate: {path}\n" in capsys.readouterr().err
