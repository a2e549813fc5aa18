"""`graphcert gate`, `show` and `diff` through click's runner: exit codes, messages, files."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from _certfactory import bench_results, certificate, fake_digest, topology_class
from click.testing import CliRunner, Result

from graphcert import workloadref
from graphcert.cert.document import make_certificate, write_certificate
from graphcert.cert.schemas import load_schema
from graphcert.cert.store import load_certificate
from graphcert.cli import cli
from tests.cert.test_certificate import REASONS, broken

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Synthetic sources, no GitHub summary, a wide terminal, and the tmp dir as cwd."""
    monkeypatch.setattr(workloadref, "source_digest", lambda ref, *a: fake_digest(ref))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@functools.cache
def reference_validator(kind: str) -> Any:
    """jsonschema's own validator of a shipped schema, the schema checked once:
    jsonschema.validate checks the schema again on every call (~40 ms each)."""
    schema = load_schema(kind)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def put(path: str, cert: dict[str, Any]) -> Path:
    reference_validator(cert["kind"]).validate(cert)  # every certificate a test touches
    return write_certificate(Path(path), cert)


def error_lines(result: Result) -> list[str]:
    return [ln for ln in result.stderr.splitlines() if ln.strip()]


# ------------------------------------------------------------------------------------ gate

def test_gate_help_is_fast_and_light() -> None:
    code = ("import sys, time; t = time.perf_counter(); from graphcert.cli import main; "
            "sys.argv = ['graphcert', 'gate', '--help']\n"
            "try:\n main()\nexcept SystemExit as e:\n assert e.code == 0\n"
            "assert 'numpy' not in sys.modules and not any(m.startswith('cuda') "
            "for m in sys.modules), sorted(sys.modules)\n"
            "assert 'graphcert.gate' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "--baseline" in done.stdout and "--junit" in done.stdout


def test_gate_passes(tmp_path: Path) -> None:
    put("reports/topology-scan.json", certificate("topology"))
    put("reports/bench-scan.json", certificate("bench"))
    result = run("gate", "reports")
    assert result.exit_code == 0, result.output
    assert "graphcert gate: PASS: 2 certificates, 0 failed" in result.stdout
    assert "reports/bench-scan.json" in result.stdout
    assert result.stderr == ""


def test_gate_json(tmp_path: Path) -> None:
    put("reports/t.json", certificate("topology"))
    result = run("gate", "reports", "--json")
    data = json.loads(result.stdout)
    assert result.exit_code == 0 and data["passed"] and data["exit_code"] == 0
    assert data["certificates"][0]["rules"][0] == {
        "rule": "verdict", "status": "pass", "summary": "passed",
        "details": ["synthetic: all checks passed"]}


@pytest.mark.parametrize("kind", sorted(REASONS))
def test_each_broken_certificate_exits_2_with_its_reason(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if kind == "sources_missing":
        monkeypatch.setattr(workloadref, "source_digest",
                            lambda ref, *a: None if ref.startswith("gone") else fake_digest(ref))
    (tmp_path / "reports").mkdir()
    path = broken(kind, tmp_path / "reports")
    result = run("gate", "reports")
    assert result.exit_code == 2
    lines = error_lines(result)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"graphcert: error: reports/{path.name}: ")
    assert REASONS[kind] in lines[0]
    assert result.stdout == ""


def test_every_broken_certificate_gets_its_own_line(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    for kind in ("tampered", "newer", "older", "missing_field", "stale", "not_json"):
        broken(kind, tmp_path / "reports")
    put("reports/good.json", certificate("bench"))
    result = run("gate", "reports")
    assert result.exit_code == 2
    lines = error_lines(result)
    assert len(lines) == 6
    for kind in ("tampered", "newer", "older", "missing_field", "stale", "not_json"):
        assert sum(REASONS[kind] in ln and f"{kind}.json" in ln for ln in lines) == 1


def test_snapshots_are_skipped_other_json_is_unusable(tmp_path: Path) -> None:
    put("reports/t.json", certificate("topology"))
    Path("reports/snapshot.json").write_text(json.dumps({"kind": "graphcert.snapshot"}))
    assert run("gate", "reports").exit_code == 0
    Path("reports/package.json").write_text(json.dumps({"name": "web"}))
    result = run("gate", "reports")
    assert result.exit_code == 2
    assert error_lines(result) == [
        "graphcert: error: reports/package.json: not a graphcert certificate (expected a JSON "
        "file written by graphcert verify or bench)"]


def test_missing_path_and_empty_folder_are_unusable(tmp_path: Path) -> None:
    assert error_lines(run("gate", "nowhere")) == [
        "graphcert: error: nowhere: no such file or folder"]
    Path("empty").mkdir()
    result = run("gate", "empty")
    assert result.exit_code == 2 and "no certificates under empty" in result.stderr


def test_policy_violation_exits_1_naming_the_rule(tmp_path: Path) -> None:
    put("reports/t.json", certificate("topology"))
    Path("pyproject.toml").write_text(
        '[tool.graphcert.gate]\nrequire = {scan = ["topology", "bench"]}\nmax_nodes = 3\n')
    result = run("gate", "reports")
    assert result.exit_code == 1
    assert "FAIL policy [require]: 1 required certificate(s) missing" in result.stdout
    assert "scan: no bench certificate" in result.stdout
    assert "FAIL scan topology on TEST-GPU [max_nodes]" in result.stdout
    assert "policy: pyproject.toml [tool.graphcert.gate]" in result.stdout


def test_policy_file_option_and_bad_policy(tmp_path: Path) -> None:
    put("reports/b.json", certificate("bench"))
    Path("gate.toml").write_text("min_speedup = 5.0\n")
    result = run("gate", "reports", "--policy", "gate.toml")
    assert result.exit_code == 1 and "[min_speedup]" in result.stdout
    Path("gate.toml").write_text("min_speedups = 5.0\n")
    result = run("gate", "reports", "--policy", "gate.toml")
    assert result.exit_code == 2
    assert error_lines(result) == ["graphcert: error: policy gate.toml: unknown key "
                                   "'min_speedups' (known keys: require, require_kinds, "
                                   "min_speedup, speedup_metric, max_nodes, max_plan_regret, "
                                   "min_graph_coverage, max_instantiations_per_topology, "
                                   "max_steady_eager_launches, allow_eager_ranges, "
                                   "allow_topology_change, allow_cross_gpu_topology, "
                                   "allow_incomplete, max_regression, "
                                   "min_noise, method_change, require_signature, "
                                   "allow_empty_baseline, max_node_regression, "
                                   "max_critical_path_regression, max_replay_regression)"]


def test_baseline_regression_junit_and_summary(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    put("base/bench-scan.json", certificate("bench"))
    put("reports/bench-scan.json", certificate("bench", results=bench_results(graph_s=1.5e-3)))
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    result = run("gate", "reports", "--baseline", "base", "--junit", "out/junit.xml",
                 "--summary", "out/summary.md")
    assert result.exit_code == 1
    assert "[max_regression]" in result.stdout and "+50.0%" in result.stdout
    suite = ET.parse("out/junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    summary = Path("out/summary.md").read_text()
    assert summary.startswith("## graphcert gate: FAIL\n")
    assert step.read_text() == "earlier step\n" + summary + "\n"
    # --summary pointing at the step summary appends once, never overwrites
    run("gate", "reports", "--baseline", "base", "--summary", str(step))
    assert step.read_text().count("## graphcert gate: FAIL") == 2
    assert step.read_text().startswith("earlier step\n")


def test_user_workload_goes_stale_when_its_file_changes(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The real source digest (no monkeypatch): certify w.py:W, edit w.py, gate says stale."""
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    Path("w.py").write_text("class W:\n    name = 'w'\n")
    digest = workloadref.source_digest("w.py:W")
    assert digest is not None
    cert = make_certificate(
        "topology", workload={"ref": "w.py:W", "name": "w", "source_digest": digest,
                              "method_digest": workloadref.method_digest("topology"),
                              "options": {}},
        environment=certificate("topology")["environment"],
        results={"classes": [topology_class(256)], "transitions": []},
        verdict={"passed": True, "reasons": []}, created="2026-01-01T00:00:00Z")
    put("reports/topology-w-TEST-GPU.json", cert)
    assert run("gate", "reports").exit_code == 0
    Path("w.py").write_text("class W:\n    name = 'w'  # edited\n")
    result = run("gate", "reports")
    assert result.exit_code == 2
    assert error_lines(result) == [
        "graphcert: error: reports/topology-w-TEST-GPU.json: stale: the sources of workload "
        "'w' changed since this certificate was made (re-run graphcert verify w.py:W)"]
    Path("w.py").unlink()
    result = run("gate", "reports")
    assert result.exit_code == 2 and "sources of workload 'w' (w.py:W) not found" in \
        result.stderr


# ------------------------------------------------------------------------------------ show

@pytest.mark.parametrize("kind", ["topology", "bench"])
def test_show(kind: str, tmp_path: Path) -> None:
    path = put(f"{kind}.json", certificate(kind))
    result = run("show", str(path))
    assert result.exit_code == 0, result.output
    assert f"{kind}  {kind}.json" in result.stdout
    assert "scan (scan), sources current" in result.stdout
    assert "TEST-GPU (GPU-00000000-test)" in result.stdout
    # the same view the command that made it prints (render/verify, render/bench)
    assert ("same topology" if kind == "topology" else "speedup (95% CI)") in result.stdout
    as_json = run("show", str(path), "--json")
    assert json.loads(as_json.stdout) == load_certificate(path).document  # as read


def test_show_displays_staleness_and_refuses_broken(tmp_path: Path) -> None:
    put("stale.json", certificate("topology", digest="f" * 64))
    assert "sources stale" in run("show", "stale.json").stdout
    broken("tampered", tmp_path)
    result = run("show", "tampered.json")
    assert result.exit_code == 2
    assert error_lines(result) == [
        "graphcert: error: tampered.json: digest mismatch: the certificate was edited or "
        "corrupted after it was written (re-run graphcert verify to regenerate it)"]


# ------------------------------------------------------------------------------------ diff

def test_diff_bench_certificates(tmp_path: Path) -> None:
    put("a.json", certificate("bench"))
    put("b.json", certificate("bench", results=bench_results(graph_s=0.5e-3)))
    result = run("diff", "a.json", "b.json")
    assert result.exit_code == 0, result.output
    assert "bench certificates: a = a.json, b = b.json" in result.stdout
    assert "faster" in result.stdout and "-50.0%" in result.stdout
    data = json.loads(run("diff", "a.json", "b.json", "--json").stdout)
    changes = {(t["side"], t["quantity"]): t["change"] for t in data["timings"]}
    assert changes[("graph", "end_to_end")] == "faster"
    assert changes[("stream", "end_to_end")] == "same"


def test_diff_topology_certificates(tmp_path: Path) -> None:
    put("a.json", certificate("topology"))
    changed = certificate("topology")["results"]
    changed["classes"][1] = topology_class(512, topology_hash="other", kernels=5)
    put("b.json", certificate("topology", results=changed))
    result = run("diff", "a.json", "b.json")
    assert result.exit_code == 1  # they differ, as cmp says it (issue 34 item 7)
    assert "kernel 3->5" in result.stdout and "topology" in result.stdout
    data = json.loads(run("diff", "a.json", "b.json", "--json").stdout)
    assert [c["change"] for c in data["classes"]] == ["same", "topology"]


def test_diff_refuses_mixed_inputs(tmp_path: Path) -> None:
    put("t.json", certificate("topology"))
    put("b.json", certificate("bench"))
    Path("s.json").write_text(json.dumps({"kind": "graphcert.snapshot"}))
    result = run("diff", "t.json", "b.json")
    assert result.exit_code == 2 and "cannot compare a topology certificate with a bench" \
        in result.stderr
    result = run("diff", "s.json", "t.json")
    assert result.exit_code == 2
    assert "s.json is a graph snapshot and t.json is not" in result.stderr


def test_diff_snapshots_node_by_node() -> None:
    snaps = ROOT / "tests" / "fixtures" / "snapshots"
    a, b = snaps / "scan-c256.snapshot.json", snaps / "scan-c512.snapshot.json"
    result = run("diff", str(a), str(b))
    assert result.exit_code == 1, result.output  # the topology differs
    data = json.loads(run("diff", str(a), str(b), "--json").stdout)
    assert data["summary"] == "topology" and not data["topology_equal"]
    assert {n["name"] for n in data["added"]} == {"scan_block_sums", "scan_add_offsets"}
    same = json.loads(run("diff", str(a), str(a), "--json").stdout)
    assert same["topology_equal"] and same["shape_equal"] and not same["added"]
