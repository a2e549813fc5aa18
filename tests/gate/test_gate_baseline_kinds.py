"""A baseline speaks for the kinds it holds (graphcert.gate.report): synthetic certificates
(tests/_certfactory.py). reports/.baseline holds profiles only, so the gate compares the
profiles and says nothing of reports/' bench or topology certificates."""

from __future__ import annotations

from pathlib import Path

import pytest
from _certfactory import CREATED, certificate, fake_digest

from graphcert.cert.document import write_certificate
from graphcert.gate import GateReport, Policy, Rule, run_gate
from graphcert.workloads import registry


@pytest.fixture(autouse=True)
def fake_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "source_digest", lambda ref, *a: fake_digest(ref))


def _gate(current: Path, baseline: Path) -> GateReport:
    return run_gate([current], policy=Policy(), baseline=baseline, created=CREATED,
                    digest_of=registry.source_digest)


def test_baseline_coverage_warns_for_the_kinds_the_baseline_holds(tmp_path: Path) -> None:
    write_certificate(tmp_path / "base" / "b.json", certificate("bench", ref="chain"))
    write_certificate(tmp_path / "cur" / "t.json", certificate("topology"))
    write_certificate(tmp_path / "cur" / "s.json", certificate("bench"))
    report = _gate(tmp_path / "cur", tmp_path / "base")
    assert report.exit_code == 0
    kinds = {c.kind: c for c in report.certificates}
    # the baseline holds bench certificates: scan's bench has none to compare with; it holds
    # no topology certificate, so it says nothing of scan's topology (no baseline rule)
    (regression,) = [r for r in kinds["bench"].rules if r.rule is Rule.REGRESSION]
    assert regression.summary == "no baseline certificate to compare with"
    assert all(r.rule is not Rule.TOPOLOGY for r in kinds["topology"].rules)
    assert report.checks[0].rule is Rule.BASELINE
    assert report.checks[0].details[0].startswith("chain bench on TEST-GPU (")


def test_an_empty_baseline_still_says_each_certificate_had_none(tmp_path: Path) -> None:
    (tmp_path / "base").mkdir()
    write_certificate(tmp_path / "cur" / "t.json", certificate("topology"))
    report = run_gate([tmp_path / "cur"], policy=Policy(allow_empty_baseline=True),
                      baseline=tmp_path / "base", created=CREATED,
                      digest_of=registry.source_digest)
    (topo,) = report.certificates
    assert any(r.rule is Rule.TOPOLOGY and r.summary == "no baseline certificate to compare "
               "with" for r in topo.rules)
