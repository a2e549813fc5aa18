"""The typed certificate (graphcert.cert.certificate): cert/store makes it once per file, its
fields are what the recorded JSON holds, and the gate's rules and the renderers read it without
parsing the document again. Recorded certificates (reports/, tests/fixtures/fleet/, made on an
H100 and two H200s) and synthetic ones (tests/_certfactory.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from _certfactory import CREATED, certificate, topology_results

from graphcert.cert.certificate import Certificate, GpuFacts
from graphcert.cert.compare import diff_certificates
from graphcert.cert.document import compute_digest, write_certificate
from graphcert.cert.results.verdict import Status, Verdict
from graphcert.cert.signing import SigningKey
from graphcert.cert.store import check_document, load_certificate
from graphcert.gate import Policy, Rule, RuleStatus, gate_run, load_all
from graphcert.gate.fleet import cross_gpu_rules
from graphcert.gate.report import baseline_for
from graphcert.gate.rules import baseline_rules, certificate_rules, set_rules
from graphcert.kinds.bench.result import BenchResult
from graphcert.kinds.plan.result import PlanResult
from graphcert.kinds.profile.result import ProfileResult
from graphcert.kinds.record.result import RecordResult
from graphcert.kinds.sweep.result import SweepFit
from graphcert.kinds.topology.result import SkippedClass, VerifyResult
from graphcert.render.certview import header_rows
from graphcert.render.html import render_html

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "reports"
FLEET = ROOT / "tests" / "fixtures" / "fleet"
RECORDED = sorted([*REPORTS.glob("*.json"), *FLEET.glob("*.json")])


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_typed_fields_of_a_recorded_certificate_match_its_json(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    cert = load_certificate(path)
    assert (cert.kind, cert.schema_version, cert.created, cert.digest) == (
        doc["kind"], doc["schema_version"], doc["created"], doc["digest"])
    assert cert.tool_version == doc["tool"]["version"]
    gpu = doc["environment"]["gpu"]
    assert cert.environment.gpu.ident == (gpu["name"], gpu["uuid"] or "")
    assert cert.environment.gpu.compute_capability == gpu["compute_capability"]
    assert cert.environment.git.commit == doc["environment"]["git"]["commit"]
    assert cert.environment.driver_version == doc["environment"]["driver_version"]
    # every field the file holds, and nothing more: diff compares these blocks
    assert cert.environment.to_json() == doc["environment"]
    assert cert.workload.to_json() == doc["workload"]
    assert (cert.workload.ref, cert.workload.name) == (doc["workload"]["ref"],
                                                       doc["workload"]["name"])
    want = {"topology": VerifyResult, "bench": BenchResult, "sweep": SweepFit, "plan": PlanResult,
            "profile": ProfileResult, "record": RecordResult}[doc["kind"]]
    assert isinstance(cert.result, want)
    assert cert.result.to_json() == doc["results"]  # the typed result holds all of it
    assert cert.recorded_verdict == Verdict.from_json(doc["verdict"])
    assert cert.recorded_verdict.to_json() == doc["verdict"]
    assert cert.verdict.status is Status.PASS  # all recorded ones passed, and earn it now
    assert cert.signature is None  # recorded unsigned
    assert cert.document == doc


def test_the_gate_makes_each_certificate_once_and_the_page_reuses_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    original = Certificate.from_document.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Certificate], doc: Mapping[str, Any]) -> Certificate:
        made.append(str(doc["digest"]))
        return original(cls, doc)  # type: ignore[no-any-return]

    monkeypatch.setattr(Certificate, "from_document", classmethod(counting))
    run = gate_run([REPORTS], policy=Policy(), baseline=FLEET, created=CREATED,
                   digest_of=None)
    assert len(made) == len(RECORDED)  # reports/ and the baseline fleet, each typed once
    assert len(set(made)) == len(RECORDED)
    assert set(run.certificates) == {c.path for c in run.report.certificates}
    from graphcert.render.htmlpage import report_page

    page = report_page(run, [REPORTS], FLEET)
    in_reports = len(list(REPORTS.glob("*.json")))
    assert page.certificates == in_reports and len(made) == len(RECORDED)  # not read again


def test_rules_fleet_and_page_read_the_typed_value_and_never_parse(
        monkeypatch: pytest.MonkeyPatch) -> None:
    policy = Policy(min_speedup=1.0, max_nodes=1000)
    run = gate_run([FLEET], policy=policy, created=CREATED, digest_of=None)
    loaded, _, problems = load_all([FLEET], digest_of=None)
    base, _, _ = load_all([REPORTS], digest_of=None)
    assert not problems and len(loaded) == 6
    # from here on, reading a result or verdict from JSON again fails the test
    for cls in (VerifyResult, BenchResult, SweepFit, Verdict):
        monkeypatch.setattr(cls, "from_json",
                            classmethod(lambda *a, **k: pytest.fail("parsed JSON again")))
    for item in loaded:
        assert isinstance(item.cert, Certificate)
        rules = certificate_rules(item.cert, policy)
        assert [r.rule for r in rules] == [Rule.VERDICT, Rule.MAX_NODES] + (
            [Rule.MIN_SPEEDUP] if item.cert.kind == "bench" else [])
        assert rules[0].status is RuleStatus.PASS
        compared = baseline_rules(item.cert, baseline_for(item, base), policy)
        assert len(compared) == 1  # no H200 baseline: a warning, parsed nothing
    crossed = cross_gpu_rules(loaded, policy)
    assert [r.status for r in crossed] == [RuleStatus.PASS, RuleStatus.PASS]  # join, scan
    assert set_rules(loaded, base, policy, with_baseline=True)[0].rule is Rule.BASELINE
    html = render_html(run.report, run.certificates)
    assert html.count("<h3>Capacity classes</h3>") == 4 and "<h3>Timings</h3>" in html


def _legacy_incomplete() -> dict[str, Any]:
    """A topology certificate as graphcert wrote it before verdicts had a status: passed
    true, with a class that was skipped (synthetic)."""
    results = topology_results((256, 512))
    results["classes"][1] = SkippedClass(512, "synthetic: needs more memory").to_json()
    cert = certificate("topology", results=results)
    cert["verdict"] = {"passed": True, "reasons": []}
    cert["digest"] = compute_digest(cert)
    return cert


def test_the_gate_judges_the_stricter_verdict_the_views_show_the_recorded_one() -> None:
    cert = check_document(_legacy_incomplete(), "legacy.json")  # the loader accepts it
    assert cert.recorded_verdict.status is Status.PASS
    assert cert.verdict.status is Status.INCOMPLETE
    assert cert.verdict.reasons == ("class 512 not verified: synthetic: needs more memory",)
    (verdict,) = [r for r in certificate_rules(cert, Policy()) if r.rule is Rule.VERDICT]
    assert verdict.status is RuleStatus.FAIL and "incomplete" in verdict.summary
    (allowed,) = [r for r in certificate_rules(cert, Policy(allow_incomplete=True))
                  if r.rule is Rule.VERDICT]
    assert allowed.status is RuleStatus.WARN
    assert ("verdict", "PASS") in header_rows(cert, "legacy.json", "current")  # as recorded


def test_a_signed_certificate_carries_its_signature(tmp_path: Path) -> None:
    key = SigningKey(b"a synthetic test key, not a secret", "a test")
    path = write_certificate(tmp_path / "signed.json", certificate("bench"), key=key)
    cert = load_certificate(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert cert.signature is not None
    assert (cert.signature.algorithm, cert.signature.key_id, cert.signature.value) == (
        "hmac-sha256", key.key_id, doc["signature"]["value"])


def test_diff_compares_the_typed_blocks_field_by_field() -> None:
    a, b = (load_certificate(FLEET / f"topology-join-NVIDIA_H200-{u}.json")
            for u in ("ae0f9605", "ff00340f"))
    diff = diff_certificates(a, b)
    fields = {f: (x, y) for f, x, y in diff.environment}
    assert fields["gpu.uuid"] == (a.environment.gpu.uuid, b.environment.gpu.uuid)
    assert "gpu.name" not in fields and diff.workload == ()
    assert [c.change for c in diff.classes] == ["same"] * len(diff.classes)


def test_gpu_facts_keep_what_a_producer_adds() -> None:
    gpu = GpuFacts.from_json({"name": "TEST-GPU", "uuid": None, "compute_capability": "0.0",
                              "sm_count": None, "memory_bytes": None, "clock_mhz": 1980,
                              "index": 3})
    assert gpu.ident == ("TEST-GPU", "") and gpu.extra == {"index": 3}
    assert gpu.to_json()["clock_mhz"] == 1980 and isinstance(gpu.to_json()["clock_mhz"], int)
