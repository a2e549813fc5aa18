"""The profile certificate on synthetic profiles (tests/_profilecerts.py; nothing here came
from a GPU): the verdict's rules, the schema, the JSON round trip, the evidence check that
refuses derived figures that do not match the per-node figures, and the node intervals."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphcert.cert.certificate import Certificate
from graphcert.cert.document import make_certificate
from graphcert.cert.evidence import contradictions
from graphcert.cert.results.verdict import Status
from graphcert.cert.schemas import load_schema, validate
from graphcert.errors import InputError
from graphcert.kinds.profile.result import ProfiledClass, ProfileResult, ReplayOverhead
from graphcert.profiling import ProfileGraph, analyse, join
from tests._profilecerts import (
    SYNTHETIC_REPLAYS,
    profile_certificate,
    synthetic_class,
    synthetic_result,
)
from tests._profiles import dags, records


def resealed(cert: dict[str, Any]) -> dict[str, Any]:
    """The certificate with its digest recomputed (as a forger would)."""
    return make_certificate("profile", workload=cert["workload"],
                            environment=cert["environment"], results=cert["results"],
                            verdict=cert["verdict"], created=cert["created"])


def test_a_synthetic_profile_certificate_fits_its_schema_and_reads_back() -> None:
    cert = profile_certificate()
    jsonschema.validate(cert, load_schema("profile"))
    assert validate(cert, "profile") == [] and contradictions(cert) == []
    typed = Certificate.from_document(cert)
    assert isinstance(typed.result, ProfileResult)
    assert typed.result == ProfileResult.from_json(json.loads(json.dumps(cert["results"])))
    assert typed.verdict.status is Status.PASS


def test_verdict_incomplete_for_dropped_records_and_lost_replays() -> None:
    assert synthetic_result().verdict.status is Status.PASS
    dropped = synthetic_result(synthetic_class(dropped=3))
    assert dropped.verdict.status is Status.INCOMPLETE
    assert "dropped 3 record(s)" in dropped.verdict.reasons[0]
    # an overhead the run could not measure is a note with its reason: the figures are whole
    no_overhead = synthetic_result(synthetic_class(overhead=None))
    assert no_overhead.verdict.status is Status.PASS
    assert no_overhead.notes == ("n=256: tracing overhead not measured: synthetic: not measured",)
    lost = synthetic_result(synthetic_class(), replays=SYNTHETIC_REPLAYS + 5)
    assert lost.verdict.status is Status.INCOMPLETE
    assert "5 of 26 replays left no record" in lost.verdict.reasons[0]
    assert synthetic_result(synthetic_class(), synthetic_class("n=512")).verdict.passed


def test_overhead_above_one_percent_is_a_note_not_a_fail() -> None:
    slow = synthetic_result(synthetic_class(overhead=1.05))
    assert slow.verdict.passed
    assert any("1.050x" in n for n in slow.notes)
    assert not synthetic_result(synthetic_class(overhead=1.005)).notes


def test_the_interval_of_each_node_median_brackets_it() -> None:
    for node in synthetic_class().profile.nodes:
        assert node.min_ns <= node.low_ns <= node.median_ns <= node.high_ns <= node.max_ns
        assert node.low_ns < node.high_ns  # 21 replays of a three-value pattern


@pytest.mark.parametrize("tamper, said", [
    (lambda p: p.update(sum_ns=p["sum_ns"] * 2), "sum_ns"),
    (lambda p: p.update(parallelism=p["parallelism"] + 1), "parallelism"),
    (lambda p: p["nodes"][0].update(share=0.9), "share"),
    (lambda p: p.update(critical_path=[0, 2, 3, 4, 5]), "critical_path"),
    (lambda p: p.update(critical_path_ns=1.0), "critical_path_ns"),
    (lambda p: p["nodes"][1].update(low_ns=p["nodes"][1]["max_ns"] + 1), "out of order"),
    (lambda p: p.update(edges=[*p["edges"], [5, 0]]), "edges"),
])
def test_evidence_refuses_derived_figures_that_do_not_match(tamper: Any, said: str) -> None:
    cert = copy.deepcopy(profile_certificate())
    tamper(cert["results"]["classes"][0]["profile"])
    found = contradictions(resealed(cert))
    assert found and any(said in f for f in found), found


def test_evidence_refuses_a_verdict_the_figures_do_not_give() -> None:
    cert = copy.deepcopy(profile_certificate(synthetic_result(synthetic_class(dropped=2))))
    cert["verdict"] = {"passed": True, "reasons": [], "status": "pass"}
    found = contradictions(resealed(cert))
    assert any("verdict.status says 'pass'" in f for f in found), found
    cert = copy.deepcopy(profile_certificate())
    cert["results"]["notes"] = ["synthetic: a made-up note"]
    assert any("notes" in f for f in contradictions(resealed(cert)))


def test_a_class_without_overhead_needs_its_reason() -> None:
    c = synthetic_class()
    with pytest.raises(InputError, match="no overhead figure and no reason"):
        type(c)(c.label, c.size, c.topology_hash, c.profile, None)


def test_bad_results_are_one_input_error() -> None:
    doc = synthetic_result().to_json()
    del doc["classes"][0]["profile"]["nodes"][0]["low_ns"]
    with pytest.raises(InputError, match="low_ns"):
        ProfileResult.from_json(doc)


def test_the_profile_schema_shares_the_common_definitions() -> None:
    profile, bench = load_schema("profile"), load_schema("bench")
    for name in ("sha256", "tool", "gpu", "environment", "workload", "verdict", "signature"):
        assert profile["$defs"][name] == bench["$defs"][name], name
    assert {k: v for k, v in profile["properties"].items() if k not in ("kind", "results")} \
        == {k: v for k, v in bench["properties"].items() if k not in ("kind", "results")}


@settings(max_examples=60, deadline=None)
@given(dags(max_nodes=6), st.integers(0, 200))
def test_evidence_finds_nothing_wrong_in_any_analysed_profile(
        case: tuple[ProfileGraph, list[list[int]]], gap: int) -> None:
    """Whatever the synthetic DAG, the figures analyse derives are the ones evidence
    recomputes from the per-node figures, through the certificate's JSON."""
    g, durations = case
    profile = analyse(join(records(g, durations, gap=gap), g))
    cls = ProfiledClass("n=1", 1, "synthetic", profile, ReplayOverhead(1.0, 1.0, 1))
    result = ProfileResult("synthetic", len(durations), (cls,), 1)
    cert = profile_certificate(result)
    assert validate(cert, "profile") == []
    assert contradictions(json.loads(json.dumps(cert))) == []


def _per_record(records_per_replay: float = 5.0) -> ProfileResult:
    """A synthetic class whose tracing adds 1,000 ns over 5 records a replay."""
    import dataclasses

    c = synthetic_class()
    return synthetic_result(dataclasses.replace(
        c, overhead=ReplayOverhead(11_000.0, 10_000.0, 50, records_per_replay)))


def test_the_overhead_says_what_tracing_adds_per_record() -> None:
    result = _per_record()
    over = result.classes[0].overhead
    assert over is not None and over.extra_ns_per_record == 200.0
    assert any("200 ns per traced record" in n for n in result.notes), result.notes
    cert = profile_certificate(result)
    assert validate(cert, "profile") == [] and contradictions(cert) == []
    assert cert["results"]["classes"][0]["overhead"]["extra_ns_per_record"] == 200.0
    assert ProfileResult.from_json(cert["results"]) == result
    cert["results"]["classes"][0]["overhead"]["extra_ns_per_record"] = 10.0  # synthetic edit
    assert any("extra_ns_per_record" in f for f in contradictions(resealed(cert)))
    # not counted (an older certificate): no figure, no claim
    plain = synthetic_result().classes[0].overhead
    assert plain is not None and plain.extra_ns_per_record is None
    assert "extra_ns_per_record" not in synthetic_result().to_json()["classes"][0]["overhead"]


def test_a_conditional_timed_by_its_body_fits_the_certificate() -> None:
    """A synthetic init -> WHILE graph whose body left 6 records a replay (tests/_profiles)."""
    from graphcert.model import NodeKind
    from graphcert.profiling import ActivityRecord
    from tests._profiles import INSTANCE, graph

    g = graph([NodeKind.KERNEL, NodeKind.CONDITIONAL], [(0, 1)])
    recs = []
    for r in range(SYNTHETIC_REPLAYS):
        t = r * 100_000
        recs.append(ActivityRecord((INSTANCE << 32) | g.nodes[0].node_id, t, t + 900 + r % 3,
                                   NodeKind.KERNEL, "k_0", 100 + r))
        recs += [ActivityRecord((9 << 32) | b % 3, t + 1000 + 500 * b, t + 1400 + 500 * b,
                                NodeKind.KERNEL, "k_body", 100 + r) for b in range(6)]
    import dataclasses

    c = dataclasses.replace(synthetic_class(),
                            profile=analyse(join(recs, g, graph_instance=INSTANCE)))
    cert = profile_certificate(synthetic_result(c))
    assert validate(cert, "profile") == [] and contradictions(cert) == []
    body = cert["results"]["classes"][0]["profile"]["nodes"][1]
    assert body["kind"] == "conditional" and body["body_records"] == 6
    assert Certificate.from_document(cert).result == synthetic_result(c)
