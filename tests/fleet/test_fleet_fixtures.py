"""Certificates recorded on a machine with two GPUs (`--device all`), gated as one fleet.

tests/fixtures/fleet/ holds what `graphcert verify scan join --device all` and `graphcert
bench chain --device all` wrote there on a two-GPU host (see docs/fleet.md). The staleness
check is left out: these are a record of one run, not kept fresh with the sources.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphcert.gate import run_gate
from graphcert.gate.policy import Policy

FLEET = Path(__file__).resolve().parents[1] / "fixtures" / "fleet"

pytestmark = pytest.mark.skipif(not FLEET.is_dir(), reason="fleet fixtures not yet recorded")


def _certificates() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(FLEET.rglob("*.json"))]


def test_fleet_holds_one_certificate_per_gpu_and_kind() -> None:
    certs = _certificates()
    gpus = {c["environment"]["gpu"]["uuid"] for c in certs}
    assert len(gpus) >= 2, "the fleet fixtures come from at least two GPUs"
    have = {(c["kind"], c["workload"]["ref"]) for c in certs}
    assert {("topology", "scan"), ("topology", "join"), ("bench", "chain")} <= have
    for kind, ref in have:
        made_on = [c["environment"]["gpu"]["uuid"] for c in certs
                   if (c["kind"], c["workload"]["ref"]) == (kind, ref)]
        assert sorted(made_on) == sorted(gpus), (kind, ref)


def test_gate_passes_over_the_fleet_and_compares_topology_across_gpus() -> None:
    report = run_gate([FLEET], policy=Policy(), created="2026-01-01T00:00:00Z",
                      digest_of=None)
    assert report.exit_code == 0, report.failures()
    cross = {r.summary.split(":")[0]: r for r in report.checks
             if r.rule.value == "allow_cross_gpu_topology"}
    assert set(cross) == {"scan", "join"}
    assert all(r.status.value == "pass" and "topology equal across" in r.summary
               for r in cross.values())
    assert len({c.gpu for c in report.certificates}) >= 2  # GPUs told apart in the report


def test_topology_equal_across_the_h100_reports_and_the_h200_fleet() -> None:
    """The committed topology certificates of scan and join (recorded on an H100) and the
    fleet's (two H200s): every class's topology hash agrees across the three GPUs."""
    from tests._env import committed_report

    ours = [committed_report("topology", w) for w in ("scan", "join")]
    fleet = sorted(FLEET.glob("topology-*.json"))
    report = run_gate([*ours, *fleet], policy=Policy(), created="2026-01-01T00:00:00Z",
                      digest_of=None)
    assert report.exit_code == 0, report.failures()
    assert len({c.gpu for c in report.certificates}) == 3
    cross = [r for r in report.checks if r.rule.value == "allow_cross_gpu_topology"]
    assert {r.summary for r in cross} == {
        "scan: topology equal across 3 GPUs (42 class comparison(s))",
        "join: topology equal across 3 GPUs (42 class comparison(s))"}
