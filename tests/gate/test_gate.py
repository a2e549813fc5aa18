"""The gate's pure core: timing compare rule, policy, rules, baseline, and golden reports.

Goldens live in tests/golden/gate/; regenerate with GRAPHCERT_UPDATE_GOLDENS=1 and read
the diff before committing.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from _certfactory import (
    CREATED,
    bench_results,
    bench_size,
    certificate,
    fake_digest,
    synthetic_hash,
    timing,
    topology_class,
    topology_results,
)

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import Change, compare_timing, diff_certificates
from graphcert.cert.document import write_certificate
from graphcert.cert.results.figures import Timing
from graphcert.gate import (
    GateReport,
    Policy,
    PolicyError,
    Rule,
    RuleStatus,
    UnusableInput,
    load_policy,
    parse_policy,
    run_gate,
)
from graphcert.gate.policy import check_workload_names
from graphcert.kinds.topology.compare import compare_topology
from graphcert.kinds.topology.result import VerifyResult
from graphcert.render.report import OutputFormat, render
from graphcert.workloads import registry

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "gate"


@pytest.fixture(autouse=True)
def fake_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "source_digest", lambda ref, *a: fake_digest(ref))


def gate(paths: list[Path], policy: Policy | None = None, baseline: Path | None = None
         ) -> GateReport:
    return run_gate(paths, policy=policy or Policy(), baseline=baseline, created=CREATED,
                    digest_of=registry.source_digest)


def rule(report: GateReport, which: Rule, index: int = 0) -> Any:
    return next(r for r in report.certificates[index].rules if r.rule is which)


# ---------------------------------------------------------------------- timing compare rule

@pytest.mark.parametrize(("b", "c", "change"), [
    (timing(1.0, 0.01), timing(1.004, 0.01), Change.SAME),
    (timing(1.0, 0.01), timing(1.10, 0.01), Change.SLOWER),
    (timing(1.0, 0.01), timing(0.90, 0.01), Change.FASTER),
    (timing(1.0, 0.001), timing(1.004, 0.001), Change.SAME),  # the 0.5 % floor
    (timing(1.0, 0.001), timing(1.006, 0.001), Change.SLOWER),
    (timing(1.0, 0.03), timing(1.04, 0.02), Change.AMBIGUOUS),  # intervals overlap
    (timing(1.0, 0.01), timing(2.0, 0.6), Change.AMBIGUOUS),  # too noisy to tell
    (timing(1.0, 0.01, samples=5), timing(1.5, 0.01), Change.AMBIGUOUS),  # too few samples
    (timing(1.0, 0.6), timing(1.3, 0.6), Change.SAME),  # within the noise is still same
])
def test_compare_timing(b: dict[str, Any], c: dict[str, Any], change: Change) -> None:
    assert compare_timing(Timing.from_json(b), Timing.from_json(c))[2] is change


def test_compare_timing_reports_diff_threshold_and_reason() -> None:
    diff, threshold, change, why = compare_timing(Timing.from_json(timing(1.0, 0.01, samples=5)),
                                                  Timing.from_json(timing(1.5)))
    assert diff == pytest.approx(0.5) and threshold == 0.01
    assert change is Change.AMBIGUOUS and why == "baseline has 5 samples"


# ---------------------------------------------------------------------------------- policy

def test_parse_policy_full() -> None:
    p = parse_policy({"require": {"scan": ["topology", "bench"]}, "require_kinds": ["topology"],
                      "min_speedup": {"scan": 1.5, "*": 1.0}, "max_nodes": 64,
                      "allow_topology_change": True, "max_regression": 0.1,
                      "speedup_metric": "device", "min_noise": 0.01}, "test")
    assert p.require == {"scan": ("topology", "bench")}
    assert p.for_workload(p.min_speedup, "scan") == 1.5
    assert p.for_workload(p.min_speedup, "join") == 1.0
    assert p.for_workload(p.max_nodes, "join") == 64
    assert p.to_dict()["min_speedup"] == {"scan": 1.5, "*": 1.0}


def test_a_policy_entry_for_a_reference_with_options_comes_first() -> None:
    """A sweep's runs share their workload's name: "chain[kernels=1]" has its own floor,
    every other chain the name's, and the names check knows references too."""
    p = parse_policy({"min_speedup": {"chain": 2.0, "chain[kernels=1]": 1.0}}, "test")
    assert p.for_workload(p.min_speedup, "chain", "chain[kernels=1]") == 1.0
    assert p.for_workload(p.min_speedup, "chain", "chain[kernels=10]") == 2.0
    assert p.for_workload(p.min_speedup, "chain") == 2.0
    check_workload_names(p, {"chain", "chain[kernels=1]"})
    check_workload_names(p, {"chain"})  # a gate over a subset: the name is known
    with pytest.raises(PolicyError, match="chian\\[kernels=1\\].*did you mean"):
        check_workload_names(parse_policy({"min_speedup": {"chian[kernels=1]": 1.0}}, "t"),
                             {"chain", "chain[kernels=1]"})


@pytest.mark.parametrize(("table", "message"), [
    ({"max_regresion": 0.1}, "unknown key 'max_regresion'"),
    ({"require": {"scan": ["speed"]}}, "require must be a list of certificate kinds"),
    ({"require": ["scan"]}, "require must be a table"),
    ({"max_nodes": 1.5}, "max_nodes must be a finite non-negative integer"),
    ({"min_speedup": "fast"}, "min_speedup must be a finite non-negative number"),
    ({"allow_topology_change": "no"}, "allow_topology_change must be true or false"),
    ({"speedup_metric": "wall"}, "speedup_metric must be host_enqueue or device or end_to_end"),
])
def test_parse_policy_errors(table: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        parse_policy(table, "test")


def test_load_policy_sources(tmp_path: Path) -> None:
    assert load_policy(cwd=tmp_path) == Policy()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert load_policy(cwd=tmp_path) == Policy()
    (tmp_path / "pyproject.toml").write_text("[tool.graphcert.gate]\nmax_nodes = 8\n")
    p = load_policy(cwd=tmp_path)
    assert p.max_nodes == 8 and p.source == "pyproject.toml [tool.graphcert.gate]"
    flat = tmp_path / "gate.toml"
    flat.write_text("max_regression = 0.2\nrequire_kinds = ['bench']\n")
    assert load_policy(flat).max_regression == 0.2
    assert load_policy(tmp_path / "pyproject.toml").max_nodes == 8
    flat.write_text("max_regression = \n")
    with pytest.raises(PolicyError, match="is not valid TOML"):
        load_policy(flat)
    with pytest.raises(PolicyError, match="absent.toml: no such file"):
        load_policy(tmp_path / "absent.toml")


# ------------------------------------------------------------------------------ gate rules

def put(folder: Path, name: str, cert: dict[str, Any]) -> Path:
    return write_certificate(folder / name, cert)


def test_gate_passes_sound_certificates(tmp_path: Path) -> None:
    put(tmp_path, "t.json", certificate("topology"))
    put(tmp_path, "b.json", certificate("bench"))
    report = gate([tmp_path])
    assert report.passed and report.exit_code == 0 and report.status is RuleStatus.PASS
    assert [c.kind for c in report.certificates] == ["bench", "topology"]


def test_failed_verdict_fails_with_its_reasons(tmp_path: Path) -> None:
    put(tmp_path, "t.json", certificate("topology", passed=False))
    report = gate([tmp_path])
    assert report.exit_code == 1
    r = rule(report, Rule.VERDICT)
    assert r.status is RuleStatus.FAIL and r.details == ("class 512: output differs",)


def test_max_nodes(tmp_path: Path) -> None:
    put(tmp_path, "t.json", certificate("topology"))  # 4 nodes per class
    assert rule(gate([tmp_path], Policy(max_nodes=4)), Rule.MAX_NODES).status is RuleStatus.PASS
    report = gate([tmp_path], Policy(max_nodes={"scan": 3, "*": 100}))
    r = rule(report, Rule.MAX_NODES)
    assert r.status is RuleStatus.FAIL and r.details[0] == "class 256: 4 nodes > 3"


def test_min_speedup_uses_the_interval(tmp_path: Path) -> None:
    put(tmp_path, "b.json", certificate("bench"))  # 2.0x [1.9, 2.1]
    assert rule(gate([tmp_path], Policy(min_speedup=1.5)), Rule.MIN_SPEEDUP).status \
        is RuleStatus.PASS
    assert rule(gate([tmp_path], Policy(min_speedup=2.05)), Rule.MIN_SPEEDUP).status \
        is RuleStatus.WARN  # median below, interval reaches it: noise never fails
    r = rule(gate([tmp_path], Policy(min_speedup=3)), Rule.MIN_SPEEDUP)
    assert r.status is RuleStatus.FAIL and "n=256: end_to_end speedup 2.00x [1.90, 2.10] < 3x" \
        in r.details


def test_require_and_require_kinds(tmp_path: Path) -> None:
    put(tmp_path, "t.json", certificate("topology"))
    report = gate([tmp_path], Policy(require={"scan": ("topology", "bench"),
                                              "join": ("topology",)}))
    assert report.exit_code == 1
    req = report.checks[0]
    assert req.rule is Rule.REQUIRE
    assert req.details == ("join: no topology certificate", "scan: no bench certificate")
    report = gate([tmp_path], Policy(require_kinds=("topology", "bench")))
    assert report.checks[0].details == ("scan: no bench certificate",)


def test_unusable_input_lists_every_problem(tmp_path: Path) -> None:
    put(tmp_path, "a.json", certificate("topology"))
    put(tmp_path, "b.json", certificate("topology"))  # a second for the same key
    (tmp_path / "c.json").write_text("{")
    with pytest.raises(UnusableInput) as info:
        gate([tmp_path, tmp_path / "absent"])
    problems = info.value.problems
    assert len(problems) == 3
    assert any("absent: no such file or folder" in p for p in problems)
    assert any("c.json: not JSON" in p for p in problems)
    assert any("a second topology certificate for workload scan" in p for p in problems)


def test_snapshots_are_skipped_and_nothing_left_is_unusable(tmp_path: Path) -> None:
    (tmp_path / "snap.json").write_text(json.dumps({"kind": "graphcert.snapshot"}))
    with pytest.raises(UnusableInput, match="no certificates under"):
        gate([tmp_path])
    put(tmp_path, "t.json", certificate("topology"))
    assert gate([tmp_path]).skipped_snapshots == 1


def test_hidden_folders_and_the_baseline_inside_paths_are_not_scanned(tmp_path: Path) -> None:
    put(tmp_path, "t.json", certificate("topology"))
    put(tmp_path / ".cache", "t.json", certificate("topology"))
    put(tmp_path / "baseline", "t.json", certificate("topology"))
    report = gate([tmp_path], baseline=tmp_path / "baseline")
    assert len(report.certificates) == 1
    assert rule(report, Rule.TOPOLOGY).status is RuleStatus.PASS


# -------------------------------------------------------------------------------- baseline

def changed_topology(kind: str) -> dict[str, Any]:
    results = topology_results()
    if kind == "topology":
        results["classes"][1] = topology_class(512, topology_hash="u" * 8, kernels=5)
    else:
        results["classes"][1]["shape_hash"] = synthetic_hash("shape other")
    return certificate("topology", results=results)


@pytest.mark.parametrize("what", ["topology", "shape"])
def test_topology_change_fails_unless_allowed(tmp_path: Path, what: str) -> None:
    put(tmp_path / "base", "t.json", certificate("topology"))
    put(tmp_path / "cur", "t.json", changed_topology(what))
    report = gate([tmp_path / "cur"], baseline=tmp_path / "base")
    r = rule(report, Rule.TOPOLOGY)
    assert report.exit_code == 1 and r.status is RuleStatus.FAIL
    assert r.details[0].startswith(f"class 512: {what} hash ")
    if what == "topology":
        assert r.details[0].endswith("nodes kernel 3->5, memset 1")
    allowed = gate([tmp_path / "cur"], Policy(allow_topology_change=True), tmp_path / "base")
    assert allowed.exit_code == 0 and rule(allowed, Rule.TOPOLOGY).status is RuleStatus.WARN


def test_timing_regression_fails_noise_does_not(tmp_path: Path) -> None:
    put(tmp_path / "base", "b.json", certificate("bench"))
    put(tmp_path / "cur", "b.json", certificate("bench", results=bench_results(graph_s=1.2e-3)))
    report = gate([tmp_path / "cur"], baseline=tmp_path / "base")
    r = rule(report, Rule.REGRESSION)
    assert report.exit_code == 1 and r.status is RuleStatus.FAIL
    assert "n=256 graph end_to_end: 1 ms -> 1.2 ms (+20.0%, noise threshold 1.0%): slower" \
        in r.details
    lenient = gate([tmp_path / "cur"], Policy(max_regression=0.25), tmp_path / "base")
    assert lenient.exit_code == 0
    # within the noise: same, passes
    put(tmp_path / "cur", "b.json",
        certificate("bench", results=bench_results(graph_s=1.008e-3)))
    assert gate([tmp_path / "cur"], baseline=tmp_path / "base").exit_code == 0


def test_ambiguous_and_throttled_timings_warn(tmp_path: Path) -> None:
    put(tmp_path / "base", "b.json", certificate("bench"))
    put(tmp_path / "cur", "b.json",
        certificate("bench", results=bench_results(graph_s=2e-3, noise=0.7)))
    r = rule(gate([tmp_path / "cur"], baseline=tmp_path / "base"), Rule.REGRESSION)
    assert r.status is RuleStatus.WARN and "ambiguous (current noise 70%)" in r.details[0]
    put(tmp_path / "cur", "b.json",
        certificate("bench", results=bench_results(graph_s=2e-3, throttled=True), passed=False))
    r = rule(gate([tmp_path / "cur"], baseline=tmp_path / "base"), Rule.REGRESSION)
    assert r.status is RuleStatus.WARN and "(GPU clocks throttled)" in r.details[0]


def test_baseline_must_exist_and_be_sound(tmp_path: Path) -> None:
    put(tmp_path / "cur", "t.json", certificate("topology"))
    with pytest.raises(UnusableInput, match="baseline folder does not exist"):
        gate([tmp_path / "cur"], baseline=tmp_path / "base")
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "x.json").write_text("[]")
    with pytest.raises(UnusableInput, match="baseline .*not a graphcert certificate"):
        gate([tmp_path / "cur"], baseline=tmp_path / "base")


def test_stale_baselines_are_fine(tmp_path: Path) -> None:
    put(tmp_path / "base", "t.json", certificate("topology", digest="e" * 64))
    put(tmp_path / "cur", "t.json", certificate("topology"))
    assert gate([tmp_path / "cur"], baseline=tmp_path / "base").exit_code == 0


def test_unreadable_embedded_snapshots_fall_back_to_hashes() -> None:
    a, b = topology_results(), topology_results()
    b["classes"][0]["topology_hash"] = synthetic_hash("topology other")
    for r in (a, b):
        r["classes"][0]["snapshot"] = {"kind": "graphcert.snapshot", "nodes": "synthetic"}
    (first, _) = compare_topology(VerifyResult.from_json(a), VerifyResult.from_json(b))
    assert first.change == "topology" and first.node_diff == ()


# ------------------------------------------------------------------------------------ diff

def test_diff_certificates() -> None:
    a = certificate("bench", results=bench_results((256, 512)))
    b = certificate("bench", gpu="TEST-GPU-2",
                    results={**bench_results((256,), graph_s=0.5e-3)})
    d = diff_certificates(Certificate.from_document(a), Certificate.from_document(b))
    assert d.environment == (("gpu.name", "TEST-GPU", "TEST-GPU-2"),)
    assert d.workload == ()
    assert "n=512 only in the baseline" in d.notes
    faster = {(t.side, t.quantity): t.change for t in d.timings}
    assert faster[("graph", "end_to_end")] is Change.FASTER
    assert faster[("stream", "end_to_end")] is Change.SAME
    assert json.loads(json.dumps(d.to_dict()))["timings"][0]["change"] in {"same", "faster"}
    t = diff_certificates(Certificate.from_document(certificate("topology")),
                          Certificate.from_document(changed_topology("topology")))
    assert [c.change for c in t.classes] == ["same", "topology"]


# --------------------------------------------------------------------------------- goldens

def golden_report(root: Path) -> GateReport:
    """A fixed scenario touching every rule: run from `root` so paths are relative."""
    cur, base = root / "reports", root / "baseline"
    put(base, "topology-scan.json", certificate("topology"))
    put(base, "bench-scan.json", certificate("bench", results=bench_results((256, 1024))))
    put(base, "topology-join.json", certificate("topology", ref="join"))
    put(base, "bench-chain.json", certificate("bench", ref="chain"))
    put(cur, "topology-scan.json", changed_topology("topology"))
    sizes = bench_results((256, 1024))
    sizes["sizes"][1] = bench_size(1024, graph_s=1.2e-3)
    sizes["sizes"][0]["graph"]["host_enqueue"] = timing(1.03e-4, 0.02)
    ratio = 2e-4 / 1.03e-4  # the host speedup follows the host timings
    sizes["sizes"][0]["speedup"]["host_enqueue"] = {"median": ratio, "low": ratio * 0.95,
                                                    "high": ratio * 1.05}
    put(cur, "bench-scan.json", certificate("bench", results=sizes))
    put(cur, "topology-join.json", certificate("topology", ref="join", passed=False))
    (cur / "snapshot-scan-256.json").write_text(json.dumps({"kind": "graphcert.snapshot"}))
    policy = parse_policy({"require": {"scan": ["topology", "bench"], "join": ["topology",
                                                                              "bench"]},
                           "max_nodes": 4, "min_speedup": 1.7}, "gate.toml")
    old = Path.cwd()
    os.chdir(root)
    try:
        return run_gate([Path("reports")], policy=policy, baseline=Path("baseline"),
                        created=CREATED, digest_of=registry.source_digest)
    finally:
        os.chdir(old)


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("GRAPHCERT_UPDATE_GOLDENS"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden"


@pytest.mark.parametrize(("fmt", "name"), [(OutputFormat.JUNIT, "report.junit.xml"),
                                           (OutputFormat.MARKDOWN, "report.md"),
                                           (OutputFormat.TABLE, "report.txt"),
                                           (OutputFormat.JSON, "report.json")])
def test_golden_outputs(tmp_path: Path, fmt: OutputFormat, name: str) -> None:
    report = golden_report(tmp_path)
    assert report.exit_code == 1
    check_golden(name, render(report, fmt, width=120))


def test_every_output_format_renders(tmp_path: Path) -> None:
    put(tmp_path, "t.json", certificate("topology"))
    report = gate([tmp_path])
    for fmt in OutputFormat:
        assert render(report, fmt)


def test_junit_is_well_formed_and_counts_failures(tmp_path: Path) -> None:
    root = ET.fromstring(render(golden_report(tmp_path), OutputFormat.JUNIT))
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    assert suite.get("tests") == str(len(cases)) and suite.get("failures") == str(len(failed))
    assert {c.find("failure").get("type") for c in failed} == {  # type: ignore[union-attr]
        "require", "verdict", "allow_topology_change", "max_regression", "max_nodes"}
