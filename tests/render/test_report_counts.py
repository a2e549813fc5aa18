"""`graphcert report` counts what it drew in words that agree with the count ("1 certificate",
not "1 certificates"; issue 34's smaller list), on a recorded certificate and snapshot."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphcert.cli import cli
from tests._env import committed_report

SNAPS = Path(__file__).resolve().parents[1] / "fixtures" / "snapshots"


@pytest.mark.parametrize("snapshots", [1, 2])
def test_one_certificate_is_singular(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     snapshots: int) -> None:
    work = tmp_path / "in"
    work.mkdir()
    shutil.copy(committed_report("topology", "scan"), work)
    for snap in sorted(SNAPS.glob("scan-*.snapshot.json"))[:snapshots]:
        shutil.copy(snap, work)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["report", "in", "-o", "report.html"])
    graphs = "1 graph;" if snapshots == 1 else "2 graphs;"
    assert f"report: report.html (1 certificate, {graphs}" in result.stderr, result.output
