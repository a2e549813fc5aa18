"""A profile certificate made on the GPU through the certificate side (issue 31): the gate
against a baseline of a second run, diff node by node, show's table and the HTML report's
timeline. Skips only without a driver or device (gpu_ctx); a missing CUPTI fails."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from graphcert.cert.store import load_certificate
from graphcert.cli import cli
from graphcert.cuda.context import RunContext


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _profile(out: Path, ref: str) -> Path:
    done = _run("profile", ref, "--size", "8", "--replays", "100", "--out", str(out))
    assert done.exit_code == 0, done.output
    (path,) = out.glob("profile-*.json")
    return path


def test_two_profiles_of_chain_gate_diff_show_and_report(gpu_ctx: RunContext,
                                                         tmp_path: Path) -> None:
    base, cur = _profile(tmp_path / "base", "chain"), _profile(tmp_path / "reports", "chain")
    assert load_certificate(cur).kind == "profile"
    # Two runs of one graph: the same topology, nodes within a generous limit (what a real
    # run's nodes move by between runs is printed, not asserted).
    (tmp_path / "policy.toml").write_text("max_node_regression = 0.5\n"
                                          "max_critical_path_regression = 0.5\n"
                                          "method_change = \"warn\"\n")
    gate = _run("gate", str(tmp_path / "reports"), "--baseline", str(tmp_path / "base"),
                "--policy", str(tmp_path / "policy.toml"))
    print(gate.output)
    assert gate.exit_code == 0, gate.output
    assert "max_node_regression pass" in gate.output, gate.output
    diff = _run("diff", str(base), str(cur), "--json")
    assert diff.exit_code == 0, diff.output
    nodes = json.loads(diff.stdout)["nodes"]
    print("node changes between two runs:",
          [(n["index"], n["change"], round(n["diff"], 4)) for n in nodes])
    assert [n["index"] for n in nodes if n["index"] is not None] == \
        sorted(n["index"] for n in nodes if n["index"] is not None)
    show = _run("show", str(cur))
    assert show.exit_code == 0, show.output
    assert "critical path" in show.stdout and "timed nodes by share" in show.stdout
    report = _run("report", str(tmp_path / "reports"), "-o", str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text()
    assert report.exit_code in (0, 1), report.output
    assert "class='timeline'" in page and "class='critical'" in page
