"""Typed results (graphcert.cert.results): exact JSON round trip on the recorded certificates,
the verdict rules (a skipped class is incomplete, never a pass), the schema's named additions
(`ended`, verdict `status`), and how the stop rule says why sampling ended."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from graphcert.cert.document import certificate_of
from graphcert.cert.results.figures import Ended, Timing, Unavailable, WayTimings
from graphcert.cert.results.verdict import Status, Verdict
from graphcert.cert.schemas import check, load_schema
from graphcert.kinds.bench.result import BenchResult
from graphcert.kinds.plan.result import PlanResult
from graphcert.kinds.profile.result import ProfileResult
from graphcert.kinds.record.result import RecordResult
from graphcert.kinds.sweep.result import SweepFit
from graphcert.kinds.topology.causes import Cause
from graphcert.kinds.topology.result import ClassResult, SampleResult, SkippedClass, VerifyResult
from graphcert.stats import StopRule
from tests._certfactory import bench_results, environment, workload

REPORTS = sorted((Path(__file__).resolve().parents[3] / "reports").glob("*.json"))


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.name)
def test_recorded_certificates_round_trip_exactly(path: Path) -> None:
    cert = json.loads(path.read_text())
    kind = {"topology": VerifyResult, "bench": BenchResult, "sweep": SweepFit, "plan": PlanResult,
            "profile": ProfileResult, "record": RecordResult}[cert["kind"]]
    result = kind.from_json(cert["results"], cert["verdict"])
    assert result.to_json() == cert["results"]
    assert result.verdict.passed is cert["verdict"]["passed"]


def test_sample_row_keys_are_one_definition() -> None:
    row = SampleResult(7).to_json()
    schema = load_schema("topology")["$defs"]["sample"]
    # `cause` only where a framework step's sample failed (certificates written before it
    # existed read back exactly): the one key that is not required
    assert set(row) == set(schema["required"]) == set(schema["properties"]) - {"cause"}
    assert SampleResult.from_json(row) == SampleResult(7)
    failed = SampleResult(7, output_equal=False, error="x", cause=Cause.PADDING).to_json()
    assert set(failed) == set(schema["properties"]) and failed["cause"] == "padding"
    assert SampleResult.from_json(failed).cause is Cause.PADDING
    assert not SampleResult(7, output_equal=False).ok and SampleResult(7).ok


def _passing(capacity: int) -> ClassResult:
    return ClassResult(capacity, True, samples=(SampleResult(capacity, True, True),))


def test_a_skipped_class_makes_the_verdict_incomplete_never_pass() -> None:
    classes = (_passing(256), SkippedClass(1 << 30, "needs about 9 GiB; 1 GiB is free"))
    verdict = VerifyResult.judge(classes)
    assert verdict.status is Status.INCOMPLETE and not verdict.passed
    assert verdict.reasons == ("class 1,073,741,824 not verified: needs about 9 GiB; 1 GiB is "
                               "free",)
    assert verdict.to_json() == {"passed": False, "reasons": list(verdict.reasons),
                                 "status": "incomplete"}
    failing = ClassResult(512, False, ("n=300: output differs",))
    assert VerifyResult.judge((*classes, failing)).status is Status.FAIL
    assert VerifyResult.judge((_passing(256),)).status is Status.PASS


def test_skipped_class_json_is_todays_shape() -> None:
    doc = SkippedClass(8, "too big", {"kernel": 1}).to_json()
    assert doc["status"] == "skipped" and doc["reason"] == "too big" and doc["samples"] == []
    back = VerifyResult.from_json({"classes": [doc], "transitions": []})
    assert back.classes == (SkippedClass(8, "too big", {"kernel": 1}),)
    assert back.verdict.status is Status.INCOMPLETE


def test_verdict_without_status_reads_from_passed() -> None:
    assert Verdict.from_json({"passed": True, "reasons": []}).status is Status.PASS
    assert Verdict.from_json({"passed": False, "reasons": ["x"]}).status is Status.FAIL


def test_certificate_of_writes_status_and_ended_within_the_schema() -> None:
    timing = Timing(10, 1e-6, 1e-6, 1e-6, 1e-6, 0.01, 0.0, 0.01, Ended.TIMEOUT)
    synthetic = BenchResult.from_json(bench_results())
    size = synthetic.sizes[0]
    way = WayTimings(timing, Unavailable("synthetic: blocker timed out"), timing)
    result = replace(synthetic, sizes=(replace(size, stream=way),))
    cert = certificate_of(result, workload=workload(), environment=environment())
    assert cert["kind"] == "bench" and cert["verdict"]["status"] == "pass"
    stream = cert["results"]["sizes"][0]["stream"]
    assert stream["host_enqueue"]["ended"] == "timeout"
    assert stream["device"] is None
    assert stream["device_unavailable_reason"] == "synthetic: blocker timed out"
    jsonschema.validate(cert, load_schema("bench"))
    assert check(cert, load_schema("bench")) == []
    assert result.timeouts("host_enqueue") == ["n=256 stream host_enqueue"]
    bad = json.loads(json.dumps(cert))
    bad["results"]["sizes"][0]["stream"]["host_enqueue"]["ended"] = "bored"
    assert check(bad, load_schema("bench"))


def test_stop_rule_says_why_sampling_ended() -> None:
    rule = StopRule(max_noise=0.01, min_samples=10, min_time_s=0.5, timeout_s=5, max_samples=50,
                    stopping="noise")
    quiet = [1.0] * 10
    assert rule.ended(quiet[:9], 1.0) is None
    assert rule.ended(quiet, 0.6) == "noise_target"
    assert replace(rule, stopping="precision").ended(quiet, 0.6) == "precision_target"
    noisy = [1.0, 2.0] * 5
    assert rule.ended(noisy, 1.0) is None
    assert rule.ended(noisy, 5.0) == "timeout"
    assert rule.ended([1.0, 2.0] * 25, 1.0) == "sample_cap"
    assert {e.value for e in Ended} == {"precision_target", "noise_target", "timeout",
                                        "sample_cap"}
