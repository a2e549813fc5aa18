"""Review fixes: a speedup floor no size could be held against fails; the gate takes the
stricter of a certificate's stored verdict and the one its results earn; `verify` labels each
reason by its class. Synthetic certificates only (tests/_certfactory.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _certfactory import CREATED, bench_results, certificate, topology_results
from click.testing import CliRunner

from graphcert.cert.document import compute_digest, write_certificate
from graphcert.cli import cli
from graphcert.gate import GateReport, Policy, Rule, RuleStatus, UnusableInput, run_gate
from graphcert.kinds.topology.result import SkippedClass, VerifyResult


def gate(folder: Path, policy: Policy | None = None) -> GateReport:
    return run_gate([folder], policy=policy or Policy(), created=CREATED, digest_of=None)


def rule(report: GateReport, which: Rule) -> Any:
    return next(r for r in report.certificates[0].rules if r.rule is which)


def _no_device_figure(results: dict[str, Any], sizes: slice = slice(None)) -> dict[str, Any]:
    """Sizes whose device figure is Unavailable (synthetic reason): no device speedup."""
    for size in results["sizes"][sizes]:
        for side in ("stream", "graph"):
            size[side]["device"] = None
            size[side]["device_unavailable_reason"] = "synthetic: no device timer"
        size["speedup"]["device"] = None
    return results


def test_speedup_floor_with_no_size_measured_fails(tmp_path: Path) -> None:
    write_certificate(tmp_path / "b.json",
                      certificate("bench", results=_no_device_figure(bench_results((256, 512)))))
    policy = Policy(min_speedup=1.5, speedup_metric="device")
    report = gate(tmp_path, policy)
    r = rule(report, Rule.MIN_SPEEDUP)
    assert r.status is RuleStatus.FAIL and report.exit_code == 1
    assert "no size has a device speedup" in r.summary
    assert r.details[0] == ("n=256: no device speedup measured (stream device: synthetic: no "
                            "device timer; graph device: synthetic: no device timer)")
    assert len(r.details) == 2
    allowed = rule(gate(tmp_path, Policy(min_speedup=1.5, speedup_metric="device",
                                         allow_incomplete=True)), Rule.MIN_SPEEDUP)
    assert allowed.status is RuleStatus.WARN and "allow_incomplete" in allowed.summary


def test_speedup_floor_with_some_sizes_measured_warns_for_the_rest(tmp_path: Path) -> None:
    write_certificate(tmp_path / "b.json", certificate(
        "bench", results=_no_device_figure(bench_results((256, 512)), slice(1, None))))
    r = rule(gate(tmp_path, Policy(min_speedup=1.5, speedup_metric="device")), Rule.MIN_SPEEDUP)
    assert r.status is RuleStatus.WARN
    assert any(d.startswith("n=512: no device speedup measured") for d in r.details)


def _resealed_pass(cert: dict[str, Any]) -> dict[str, Any]:
    """`cert` with a forged verdict of pass, re-sealed with the digest function."""
    cert["verdict"] = {"passed": True, "reasons": [], "status": "pass"}
    cert["digest"] = compute_digest(cert)
    return cert


def test_stored_pass_over_a_failed_class_is_refused(tmp_path: Path) -> None:
    # issue 28: a contradiction is unusable input (exit 2), not one side of it taken
    results = topology_results((256, 512))
    results["classes"][1].update(status="fail", reason="synthetic: output differs")
    write_certificate(tmp_path / "t.json", _resealed_pass(certificate("topology",
                                                                      results=results)))
    with pytest.raises(UnusableInput) as refused:
        gate(tmp_path)
    assert refused.value.problems[0].endswith(
        "t.json: contradicts itself: verdict.status says 'pass' but class 512 has status "
        "'fail' (edited or corrupted; re-run graphcert verify to regenerate it)")


def test_stored_pass_over_a_throttled_size_is_refused(tmp_path: Path) -> None:
    cert = certificate("bench", results=bench_results((256,), throttled=True))
    write_certificate(tmp_path / "b.json", _resealed_pass(cert))
    with pytest.raises(UnusableInput, match="verdict.status says 'pass' but size n=256 is "
                                            "throttled"):
        gate(tmp_path)


def test_stored_fail_stays_failed_when_the_results_look_clean(tmp_path: Path) -> None:
    write_certificate(tmp_path / "t.json", certificate("topology", passed=False))
    r = rule(gate(tmp_path), Rule.VERDICT)
    assert r.status is RuleStatus.FAIL and r.details == ("class 512: output differs",)


def test_verify_labels_each_reason_by_its_class(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphcert.run import jobs

    results = topology_results((256, 512))
    results["classes"][0].update(status="fail", reason="synthetic: output differs")
    results["classes"].append(SkippedClass(1 << 30, "synthetic: too large").to_json())
    result = VerifyResult.from_json(results)  # judged as verify judges it

    def fake(refs: Any, capacities: Any, *, on_result: Any, **_: Any) -> list[Any]:
        done = jobs.Certified("scan", result)
        on_result(done)
        return [done]

    monkeypatch.setattr(jobs, "verify_workloads", fake)
    out = CliRunner().invoke(cli, ["verify", "scan", "--no-certificate"])
    assert out.exit_code == 1, out.output
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith(("FAIL", "INCOMPLETE"))]
    assert lines == ["FAIL scan: class 256: synthetic: output differs",
                     "INCOMPLETE scan: class 1,073,741,824 not verified: synthetic: too large"]
