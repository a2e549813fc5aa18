"""Fixes from issue 17 seen by a new user: typo'd commands, flag clashes, silent skips,
bare or misleading headers. All on recorded certificates/snapshots or synthetic data."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from graphcert.cli import cli
from graphcert.render import graphviz
from tests._env import committed_report

ROOT = Path(__file__).resolve().parents[2]
SNAPS = ROOT / "tests" / "fixtures" / "snapshots"
REPORTS = ROOT / "reports"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "120", "NO_COLOR": "1"})


@pytest.mark.parametrize(("typo", "meant"), [("gatee", "gate"), ("invntory", "inventory"),
                                             ("difff", "diff")])
def test_unknown_command_suggests_the_closest(typo: str, meant: str) -> None:
    result = run(typo)
    assert result.exit_code == 2
    assert f"no such command '{typo}' (did you mean {meant}?)" in result.stderr


def test_unknown_command_far_from_any_gets_no_guess() -> None:
    result = run("zzzzzz")
    assert result.exit_code == 2 and "did you mean" not in result.stderr


def test_inventory_json_and_tree_refused_in_one_line() -> None:
    result = run("inventory", str(SNAPS / "scan-c256.snapshot.json"), "--json", "--tree")
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert "--json and --tree do not combine" in line


def test_diff_of_identical_topology_snapshots_says_so() -> None:
    result = run("diff", str(SNAPS / "chain-c256.snapshot.json"),
                 str(SNAPS / "chain-c512.snapshot.json"))
    assert result.exit_code == 0, result.output
    assert result.stdout == "no differences: same topology, launch shape and recorded fields\n"


def test_diff_of_different_topologies_keeps_the_table() -> None:
    result = run("diff", str(SNAPS / "scan-c256.snapshot.json"),
                 str(SNAPS / "scan-c512.snapshot.json"))
    assert result.exit_code == 1, result.output  # they differ (issue 34 item 7)
    # node 0's deps, and its parameter values (the fixtures hold them since 2026-11-25)
    assert "added" in result.stdout and result.stdout.rstrip().endswith("5 changed")
    # the summary counts the rows the table shows changed (a parameter is a row)
    rows = [ln for ln in result.stdout.splitlines() if "  changed  " in ln]
    assert len(rows) == 5, rows


def test_diff_of_two_workloads_warns_up_front() -> None:
    a, b = committed_report("topology", "scan"), committed_report("topology", "join")
    result = run("diff", str(a), str(b))
    assert result.exit_code == 1, result.output  # two workloads' graphs differ
    first = result.stderr.splitlines()[0]
    assert first.startswith("graphcert: warning: these certificates are of different "
                            "workloads") and "scan" in first and "join" in first


def test_diff_of_one_workload_has_no_warning() -> None:
    a = committed_report("topology", "scan")
    result = run("diff", str(a), str(a))
    assert result.exit_code == 0 and "warning" not in result.stderr


def test_gate_headline_names_the_set_rule_that_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    """One passing certificate under a policy that requires a bench one too: the gate fails
    with 0 failed certificates, and the headline says which set rule failed."""
    cert = committed_report("topology", "scan")
    monkeypatch.chdir(ROOT)  # the policy in ./pyproject.toml requires topology and bench
    result = run("gate", str(cert.relative_to(ROOT)))
    assert result.exit_code == 1, result.output
    head = result.stdout.splitlines()[0]
    assert head.startswith("graphcert gate: FAIL: 1 certificate, 0 failed, set rule")
    assert "require" in head


def test_missing_dot_is_said_once_with_the_install_command(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(graphviz, "_told", False)
    assert graphviz.dot_to_svg("digraph { a -> b }") is None
    assert graphviz.dot_to_svg("digraph { a -> b }") is None
    err = capsys.readouterr().err
    assert err.count("graphcert: note:") == 1
    assert "apt-get install graphviz" in err and "conda install graphviz" in err


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_dot_to_svg_where_graphviz_is_installed() -> None:
    svg = graphviz.dot_to_svg("digraph { a -> b }")
    assert svg is not None and "<svg" in svg
