"""The gate on what did not fully happen (issue 12/14): an incomplete verify certificate fails
unless `allow_incomplete = true`; a rule resting on a timing whose sampling ended on its
timeout warns, naming it. Synthetic certificates only (tests/_certfactory.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _certfactory import CREATED, bench_results, certificate, topology_results

from graphcert.cert.document import compute_digest, write_certificate
from graphcert.gate import GateReport, Policy, PolicyError, Rule, RuleStatus, parse_policy, run_gate
from graphcert.kinds.topology.result import SkippedClass


def gate(folder: Path, policy: Policy | None = None, baseline: Path | None = None
         ) -> GateReport:
    return run_gate([folder], policy=policy or Policy(), baseline=baseline, created=CREATED,
                    digest_of=None)


def rule(report: GateReport, which: Rule) -> Any:
    return next(r for r in report.certificates[0].rules if r.rule is which)


def _with_skipped_class() -> dict[str, Any]:
    results = topology_results((256,))
    results["classes"].append(SkippedClass(1 << 30, "synthetic: needs 9 GiB, 1 free").to_json())
    return results


def test_incomplete_fails_unless_allowed(tmp_path: Path) -> None:
    cert = certificate("topology", results=_with_skipped_class(), passed=False,
                       reasons=["class 1,073,741,824 not verified: synthetic"])
    cert["verdict"]["status"] = "incomplete"
    cert["digest"] = compute_digest(cert)
    write_certificate(tmp_path / "t.json", cert)
    report = gate(tmp_path)
    r = rule(report, Rule.VERDICT)
    assert report.exit_code == 1 and r.status is RuleStatus.FAIL
    assert "incomplete" in r.summary and r.details == (
        "class 1,073,741,824 not verified: synthetic",)
    allowed = rule(gate(tmp_path, Policy(allow_incomplete=True)), Rule.VERDICT)
    assert allowed.status is RuleStatus.WARN and "allow_incomplete" in allowed.summary


def test_old_certificate_that_passed_with_a_skipped_class_reads_incomplete(tmp_path: Path
                                                                          ) -> None:
    # written before the fix: passed true, no status, a skipped class
    write_certificate(tmp_path / "t.json", certificate("topology", results=_with_skipped_class(),
                                                       reasons=[]))
    r = rule(gate(tmp_path), Rule.VERDICT)
    assert r.status is RuleStatus.FAIL and "incomplete" in r.summary
    assert r.details == ("class 1,073,741,824 not verified: synthetic: needs 9 GiB, 1 free",)


def _timed_out(results: dict[str, Any], side: str, quantity: str) -> dict[str, Any]:
    for size in results["sizes"]:
        for s in ("stream", "graph"):
            for q in ("host_enqueue", "device", "end_to_end"):
                size[s][q]["ended"] = "noise_target"
        size[side][quantity]["ended"] = "timeout"
    return results


def test_speedup_resting_on_a_timed_out_timing_warns(tmp_path: Path) -> None:
    write_certificate(tmp_path / "b.json", certificate(
        "bench", results=_timed_out(bench_results(), "graph", "end_to_end")))
    r = rule(gate(tmp_path, Policy(min_speedup=1.5)), Rule.MIN_SPEEDUP)
    assert r.status is RuleStatus.WARN
    assert r.details == ("n=256 graph end_to_end: sampling ended on its timeout, short of its "
                         "target",)
    # a timeout on a quantity the rule does not use changes nothing
    write_certificate(tmp_path / "b.json", certificate(
        "bench", results=_timed_out(bench_results(), "graph", "device")))
    assert rule(gate(tmp_path, Policy(min_speedup=1.5)), Rule.MIN_SPEEDUP).status \
        is RuleStatus.PASS
    # a failing rule stays failed, with the warning added
    r = rule(gate(tmp_path, Policy(min_speedup=3, speedup_metric="device")), Rule.MIN_SPEEDUP)
    assert r.status is RuleStatus.FAIL and any("timeout" in d for d in r.details)


def test_regression_rule_warns_on_a_timed_out_timing_that_moved(tmp_path: Path) -> None:
    write_certificate(tmp_path / "base" / "b.json", certificate("bench"))
    # synthetic: the stream side 3% slower (beyond its 1% noise, within max_regression 5%)
    write_certificate(tmp_path / "cur" / "b.json", certificate(
        "bench", results=_timed_out(bench_results(stream_s=2.06e-3), "stream", "host_enqueue")))
    r = rule(gate(tmp_path / "cur", baseline=tmp_path / "base"), Rule.REGRESSION)
    assert r.status is RuleStatus.WARN
    assert ("current n=256 stream host_enqueue: sampling ended on its timeout, short of its "
            "target") in r.details


def test_a_timed_out_timing_that_compared_same_passes_and_is_named(tmp_path: Path) -> None:
    """Sameness is judged against the samples' noise, whatever ended the sampling: '6
    timing(s): 6 same' is a pass (issue 34 item 6), the timed-out figure still named."""
    write_certificate(tmp_path / "base" / "b.json", certificate("bench"))
    write_certificate(tmp_path / "cur" / "b.json", certificate(
        "bench", results=_timed_out(bench_results(), "stream", "host_enqueue")))
    r = rule(gate(tmp_path / "cur", baseline=tmp_path / "base"), Rule.REGRESSION)
    assert (r.status, r.summary) == (RuleStatus.PASS, "6 timing(s): 6 same")
    assert r.details == ("current n=256 stream host_enqueue: sampling ended on its timeout; "
                         "compared same within its noise",)


def test_allow_incomplete_policy_key() -> None:
    assert parse_policy({"allow_incomplete": True}, "test").allow_incomplete
    assert not parse_policy({}, "test").allow_incomplete
    assert parse_policy({}, "test").to_dict()["allow_incomplete"] is False
    with pytest.raises(PolicyError, match="allow_incomplete must be true or false"):
        parse_policy({"allow_incomplete": "yes"}, "test")
