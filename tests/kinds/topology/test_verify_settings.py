"""VerifySettings: verify's settings as a typed value that writes and reads the certificate's
`results.settings` exactly as recorded (workloads and framework steps alike)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _certfactory import certificate, topology_results

import graphcert
from graphcert.cert.document import validate_certificate
from graphcert.kinds.topology.result import VerifyResult, VerifySettings

ROOT = Path(__file__).resolve().parents[3]
TESTS = ROOT / "tests"
RECORDED = sorted([*ROOT.glob("reports/topology-*.json"),
                   *ROOT.glob("tests/fixtures/fleet/topology-*.json")])


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_recorded_settings_read_and_write_back_identically(path: Path) -> None:
    results = json.loads(path.read_text())["results"]
    settings = VerifySettings.from_json(results["settings"])
    assert json.dumps(settings.to_json()) == json.dumps(results["settings"])  # order too
    back = VerifyResult.from_json(results).to_json()["settings"]
    assert json.dumps(back) == json.dumps(results["settings"])


def test_recorded_certificates_cover_workloads_and_steps() -> None:
    frameworks = {json.loads(p.read_text())["results"]["settings"].get("framework")
                  for p in RECORDED}
    assert None in frameworks and len(frameworks) > 1


def test_a_workloads_settings_leave_out_the_step_fields() -> None:
    assert VerifySettings(4, 0, "global", "2^0..2^20").to_json() == {
        "samples": 4, "seed": 0, "mode": "global", "classes": "2^0..2^20"}


def test_a_verified_step_records_typed_settings() -> None:
    sys.path.insert(0, str(TESTS))
    import _fakestep as fake

    result = graphcert.verify_step(fake.SAFE, "4,8", samples=2, ref="x.py:SAFE")
    assert result.settings == VerifySettings(2, 0, "synthetic capture", "4,8",
                                             framework="synthetic", rtol=fake.SAFE.rtol,
                                             atol=fake.SAFE.atol, pad_value=0.0)
    assert list(result.to_json()["settings"]) == [
        "samples", "seed", "mode", "classes", "framework", "rtol", "atol", "pad_value"]


def test_results_without_settings_read_as_none() -> None:
    result = VerifyResult.from_json(topology_results())
    assert result.settings is None and "settings" not in result.to_json()


def test_the_schema_requires_the_settings_verify_reads() -> None:
    results = {**topology_results(), "settings": {"framework": "synthetic"}}
    problems = validate_certificate(certificate("topology", results=results))
    assert problems and all("settings" in p for p in problems)
    assert any("samples" in p for p in problems)
    assert validate_certificate(certificate("topology")) == []
