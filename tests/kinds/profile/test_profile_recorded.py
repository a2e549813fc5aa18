"""The analysis and the gate's node rules on profiles recorded on an H100 (tests/fixtures/
profile/: chain and converge, two runs of one call; see tests/fixtures/README.md): the
figures a certificate holds are consistent with themselves, the critical path is the longest
path by node medians, two runs of one machine agree, and a node made slower by more than the
limit (a copy of the recorded figures, edited here) fails naming its index and kernel."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from graphcert.cert.store import load_certificate
from graphcert.gate.policy import Policy
from graphcert.gate.rules import Rule, RuleStatus
from graphcert.kinds.profile.result import ProfileResult
from graphcert.kinds.profile.rules import profile_baseline_rules
from graphcert.profiling import longest_path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "profile"
NAMES = ("profile-chain-NVIDIA_H100_80GB_HBM3.json",
         "profile-converge-NVIDIA_H100_80GB_HBM3.json")


def _result(folder: str, name: str) -> ProfileResult:
    result = load_certificate(FIXTURES / folder / name).result
    assert isinstance(result, ProfileResult)
    return result


@pytest.mark.parametrize("name", NAMES)
def test_recorded_figures_hold_together(name: str) -> None:
    for cls in _result("current", name).classes:
        p = cls.profile
        assert p.replays > 0 and p.dropped == 0
        for n in p.nodes:
            assert n.min_ns <= n.low_ns <= n.median_ns <= n.high_ns <= n.max_ns
        assert sum(n.share for n in p.nodes) == pytest.approx(1.0)
        assert p.sum_ns == pytest.approx(sum(n.median_ns for n in p.nodes))
        assert p.parallelism == pytest.approx(p.sum_ns / p.span_ns)
        weights = [0.0] * (max(i for e in p.edges for i in e) + 1 if p.edges else
                           max(n.index for n in p.nodes) + 1)
        for n in p.nodes:
            weights[n.index] = n.median_ns
        path, length = longest_path(len(weights), p.edges, weights)
        assert tuple(path) == p.critical_path and length == pytest.approx(p.critical_path_ns)
        assert cls.overhead is not None and cls.overhead.ratio > 1  # tracing costs time


def test_converge_times_its_while_node_by_its_body() -> None:
    (cls,) = _result("current", NAMES[1]).classes
    body = [n for n in cls.profile.nodes if n.body_records is not None]
    assert len(body) == 1 and "WHILE body" in (body[0].name or "")
    assert cls.profile.unmatched == 0


@pytest.mark.parametrize("name", NAMES)
def test_two_runs_of_one_call_pass_the_node_rules(name: str) -> None:
    rules = profile_baseline_rules(_result("current", name), _result("base", name),
                                   "base", Policy(), "w", "w")
    assert {r.rule: r.status for r in rules} == {Rule.NODE_REGRESSION: RuleStatus.PASS,
                                                  Rule.PATH_REGRESSION: RuleStatus.PASS}


def test_a_node_slower_than_the_limit_fails_naming_it() -> None:
    base = _result("base", NAMES[0])
    cls = base.classes[0]
    nodes = list(cls.profile.nodes)
    k = 5
    n = nodes[k]
    nodes[k] = dataclasses.replace(n, median_ns=n.median_ns * 1.5, low_ns=n.high_ns * 1.4,
                                   high_ns=n.high_ns * 1.6, max_ns=int(n.max_ns * 1.6))
    slow = dataclasses.replace(base, classes=(dataclasses.replace(
        cls, profile=dataclasses.replace(cls.profile, nodes=tuple(nodes))),))
    rules = profile_baseline_rules(slow, base, "base", Policy(), "w", "w")
    (node_rule,) = [r for r in rules if r.rule is Rule.NODE_REGRESSION]
    assert node_rule.status is RuleStatus.FAIL
    text = " ".join((node_rule.summary, *node_rule.details))
    assert f"node {n.index}" in text and (n.name or "") in text
