"""One verdict rule per result type: each result is made with the verdict its type's `judge`
gives (no default that reads pass), and run/, the commands and the gate use that one rule, the
SM-clock rule included. Synthetic results and certificates only (tests/_certfactory.py)."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from _certfactory import CREATED, bench_results, certificate, topology_results

from graphcert.cert.document import write_certificate
from graphcert.cert.results.figures import Unavailable
from graphcert.cert.results.verdict import Status, Verdict
from graphcert.gate import Policy, Rule, run_gate
from graphcert.gate import RuleStatus as GateStatus
from graphcert.kinds.bench.result import BenchResult
from graphcert.kinds.sweep.result import SweepFit
from graphcert.kinds.topology.result import ClassResult, SkippedClass, VerifyResult

THROTTLED = "n=256: SM clock dropped from 1980 to 1500 MHz (throttled)"
UNREAD = ("n=256: the SM clock could not be read (clock64 over %globaltimer gave no time), "
          "so throttling was not checked")


def _gate_verdict(folder: Path, cert: dict[str, Any]) -> Any:
    """The gate's verdict rule on `cert` (its stored verdict: a pass with no reasons)."""
    write_certificate(folder / "c.json", cert)
    report = run_gate([folder], policy=Policy(allow_incomplete=True), created=CREATED,
                      digest_of=None)
    return next(r for r in report.certificates[0].rules if r.rule is Rule.VERDICT)


def _unread_clock(results: dict[str, Any]) -> dict[str, Any]:
    """`results` with the SM clock of every size not read (as throttle_check leaves it)."""
    results = copy.deepcopy(results)
    for size in results["sizes"]:
        size.pop("clock_mhz", None)
    return results


@pytest.mark.parametrize("make", [
    lambda: VerifyResult((ClassResult(256, True),)),  # type: ignore[call-arg]
    lambda: BenchResult(()),  # type: ignore[call-arg]
    lambda: SweepFit("kernels", (1, 2), {}),  # type: ignore[call-arg]
], ids=["verify", "bench", "sweep"])
def test_a_result_cannot_be_made_without_a_verdict(make: Any) -> None:
    with pytest.raises(TypeError, match="verdict"):
        make()


@pytest.mark.parametrize("result_type", [VerifyResult, BenchResult, SweepFit])
def test_no_result_type_has_a_default_verdict(result_type: type) -> None:
    (verdict,) = [f for f in dataclasses.fields(result_type) if f.name == "verdict"]
    assert verdict.default is dataclasses.MISSING
    assert verdict.default_factory is dataclasses.MISSING


def test_judge_has_the_clock_rule() -> None:
    row = BenchResult.from_json(_unread_clock(bench_results())).sizes[0]
    assert row.clock_mhz is None
    unread = BenchResult.judge([row], clock_unavailable=None, other_context=None)
    assert unread.status is Status.INCOMPLETE and unread.reasons == (UNREAD,)
    # a framework step says why its clock is never read: no gap in the evidence
    step = BenchResult.judge([row], clock_unavailable=Unavailable("synthetic: not read"),
                             other_context=None)
    assert step.passed


@pytest.mark.parametrize(("results", "status", "reasons"), [
    (bench_results(throttled=True), Status.FAIL, (THROTTLED,)),
    (_unread_clock(bench_results()), Status.INCOMPLETE, (UNREAD,)),
    (bench_results(), Status.PASS, ()),
], ids=["throttled", "clock-unread", "clean"])
def test_gate_and_judge_agree_on_a_bench_size(tmp_path: Path, results: dict[str, Any],
                                               status: Status, reasons: tuple[str, ...]
                                               ) -> None:
    result = BenchResult.from_json(results)  # no stored verdict: judged as run/ judges
    assert (result.verdict.status, result.verdict.reasons) == (status, reasons)
    # stored: a pass, except where the evidence fails it (a stored pass over a throttled size
    # contradicts itself and is refused at load: test_gate_evidence)
    failed = status is Status.FAIL
    stored = certificate("bench", results=results, passed=not failed,
                         reasons=list(reasons) if failed else [])
    r = _gate_verdict(tmp_path, stored)
    assert r.status is {Status.FAIL: GateStatus.FAIL, Status.INCOMPLETE: GateStatus.WARN,
                        Status.PASS: GateStatus.PASS}[status]
    assert tuple(r.details) == reasons


def test_gate_judges_the_fresh_context_half(tmp_path: Path) -> None:
    results = bench_results()
    results["other_context"] = {**bench_results(throttled=True),
                                "verdict": {"passed": False, "reasons": [THROTTLED],
                                            "status": "fail"}}
    result = BenchResult.from_json(results)
    assert result.verdict.status is Status.FAIL
    assert result.verdict.reasons == (f"fresh context: {THROTTLED}",)
    r = _gate_verdict(tmp_path, certificate("bench", results=results, passed=False,
                                            reasons=list(result.verdict.reasons)))
    assert r.status is GateStatus.FAIL and tuple(r.details) == result.verdict.reasons


def test_gate_keeps_a_framework_steps_unread_clock_a_pass(tmp_path: Path) -> None:
    results = _unread_clock(bench_results())
    results["clock"] = {"before_mhz": None, "after_mhz": None,
                        "unavailable_reason": "synthetic: the step's clock is not read"}
    assert BenchResult.from_json(results).verdict.passed
    assert _gate_verdict(tmp_path, certificate("bench", results=results, reasons=[])).status \
        is GateStatus.PASS


def test_a_sweep_point_without_a_clock_is_incomplete() -> None:
    point = BenchResult.from_json(_unread_clock(bench_results())).sizes[0]
    assert SweepFit.judge([point]).status is Status.INCOMPLETE


def test_a_verdict_labels_each_reason_without_judging_again() -> None:
    classes = (ClassResult(256, False, ("synthetic: output differs",)),
               SkippedClass(1 << 30, "synthetic: too large"))
    verdict = VerifyResult.judge(classes)
    assert verdict.status is Status.FAIL
    assert verdict.labelled() == (
        (Status.FAIL, "class 256: synthetic: output differs"),
        (Status.INCOMPLETE, "class 1,073,741,824 not verified: synthetic: too large"))
    fresh = Verdict.of([], ["clock"]).combined(Verdict.of(["throttled"]), "fresh context: ")
    assert fresh.labelled() == ((Status.INCOMPLETE, "clock"),
                                (Status.FAIL, "fresh context: throttled"))
    # read back from a certificate an incomplete verdict's reasons are all incomplete
    assert Verdict.from_json(Verdict.of([], ["clock"]).to_json()).labelled() == (
        (Status.INCOMPLETE, "clock"),)


def test_topology_judge_agrees_with_the_gate(tmp_path: Path) -> None:
    results = topology_results((256,))
    results["classes"].append(SkippedClass(1 << 30, "synthetic: too large").to_json())
    verdict = VerifyResult.from_json(results).verdict
    r = _gate_verdict(tmp_path, certificate("topology", results=results, reasons=[]))
    assert verdict.status is Status.INCOMPLETE and r.status is GateStatus.WARN
    assert tuple(r.details) == verdict.reasons

