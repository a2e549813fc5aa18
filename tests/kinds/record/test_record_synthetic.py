"""graphcert record's analysis, certificate and gate rules on SYNTHETIC event streams (issue
32): made-up handles, hashes and timestamps, no GPU. Real recordings replace these once the
GPU tier has recorded examples/record/serve_torch.py."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from _certfactory import environment

from graphcert.cert.document import compute_digest, make_certificate
from graphcert.cert.evidence import contradictions
from graphcert.cert.results.verdict import Status
from graphcert.cert.store import check_document
from graphcert.gate.policy import parse_policy
from graphcert.gate.rules import Rule, RuleStatus, baseline_rules, certificate_rules
from graphcert.kinds.record.html import record_html
from graphcert.kinds.record.result import Ended, RecordResult
from graphcert.kinds.record.views import summary_lines
from graphcert.model import GraphSnapshot, NodeKind, RawGraph, RawNode, snapshot_from_raw
from graphcert.recording import (
    Destroyed,
    Instantiated,
    KernelRun,
    Launched,
    Made,
    Recording,
    Updated,
    analyse,
)
from graphcert.recording.analysis import kernels_in
from graphcert.workloads import registry
from tests._modelgraphs import kern, memset
from tests._recordfactory import in_place


def synthetic_snapshot(label: str) -> GraphSnapshot:
    """A stand-in snapshot: only its fingerprints matter to the analysis."""
    return GraphSnapshot((), (), (label * 64)[:64], ("5" + label * 63)[:64])


def synthetic_stream(*, eager_steady: int = 0, recaptures: int = 0) -> Recording:
    """Two buckets (topologies a, b), each captured once and launched 3 times; `recaptures`
    more instantiations of a; `eager_steady` eager "fallback_kernel" launches after the
    first graph launch. Times are made up."""
    inst = [Instantiated(0, (100, 10), Made.CAPTURE, 1_000, 500, 2_000, synthetic_snapshot("a")),
            Instantiated(1, (101, 11), Made.CAPTURE, 2_000, 600, 2_500, synthetic_snapshot("b"))]
    # each recapture destroys the executable before it (llama.cpp's warm-up reset)
    inst += [Instantiated(2 + i, (102 + i, 12 + i), Made.CAPTURE, 5_000 + 10 * i, 400, 1_000,
                          synthetic_snapshot("a")) for i in range(recaptures)]
    gone = [Destroyed(0 if i == 0 else 1 + i, 4_999 + 10 * i) for i in range(recaptures)]
    launched, kernels, corr, t = [], [KernelRun("warmup_eager", 0, 10, 0)], 1, 100
    for key, gid in ((0, 100), (1, 101)):
        for _ in range(3):
            launched.append(Launched(key, t, corr))
            kernels += [KernelRun("gemm", t, t + 30, gid, corr),
                        KernelRun("relu", t + 30, t + 40, gid, corr)]
            corr, t = corr + 1, t + 100
    kernels += [KernelRun("fallback_kernel", t + 10 * i, t + 10 * i + 5, 0)
                for i in range(eager_steady)]
    return Recording(tuple(inst), tuple(launched), (Updated(0, 900, False, "CUresult 910"),),
                     (*gone, Destroyed(1, 9_000)), tuple(kernels))


def test_coverage_counts_graph_and_eager_kernels_overall_and_in_steady_state() -> None:
    rec = analyse(synthetic_stream(eager_steady=4))
    assert (rec.overall.graph_kernels, rec.overall.eager_kernels) == (12, 5)
    assert rec.steady is not None  # the warm-up kernel ran before the first graph launch
    assert (rec.steady.graph_kernels, rec.steady.eager_kernels) == (12, 4)
    assert rec.steady.fraction == pytest.approx(12 / 16)
    assert [(e.name, e.count, e.total_ns) for e in rec.steady_eager] == [
        ("fallback_kernel", 4, 20)]


def graph_with_bodies() -> GraphSnapshot:
    """Synthetic: two kernels and a memset at the top, a child graph of one kernel, and a
    WHILE conditional whose body holds a kernel (run an unknown number of times)."""
    child = RawGraph((kern(0, "k_child"),), ())
    body = RawGraph((kern(0, "k_body"),), ())
    return snapshot_from_raw(RawGraph(
        (kern(0, "k_a"), kern(1, "k_b"), memset(2), RawNode(3, NodeKind.GRAPH, {}, (child,)),
         RawNode(4, NodeKind.CONDITIONAL, {"type": "while", "size": 1}, (body,))),
        ((0, 1), (1, 2), (2, 3), (3, 4))))


def test_launches_timed_whole_count_their_graphs_kernel_nodes() -> None:
    """Synthetic: what graphcert record sees with GRAPH_TRACE on: one record per graph launch
    (its device span) and kernel records of eager work only."""
    snap = graph_with_bodies()
    assert kernels_in(snap) == 3 and kernels_in(None) == 0  # the body's kernel is not counted
    inst = (Instantiated(0, (2, 1), Made.CAPTURE, 1_000, 500, 2_000, snap),
            Instantiated(1, (4, 3), Made.EXPLICIT, 1_500, 500, None, None, "not read"))
    launched = tuple(Launched(key, 0, corr, 1_000 * corr, 1_000 * corr + span)
                     for key, corr, span in ((0, 1, 300), (0, 2, 310), (1, 3, 50)))
    eager = (KernelRun("warmup", 10, 20, 0), KernelRun("fallback", 2_500, 2_540, 0))
    rec = analyse(Recording(inst, launched, kernels=eager))
    assert (rec.overall.graph_kernels, rec.overall.graph_ns) == (6, 660)  # 3 + 3 + 0 kernels
    assert (rec.overall.eager_kernels, rec.overall.eager_ns) == (2, 50)
    assert rec.steady is not None  # from the first launch that ran a kernel (t=1,000)
    assert (rec.steady.graph_kernels, rec.steady.eager_kernels) == (6, 1)
    assert [e.name for e in rec.steady_eager] == ["fallback"]
    a, b = rec.graphs
    assert (a.launches, a.device_ns_median, a.device_ns_total) == (2, 305.0, 610)
    assert (b.launches, b.device_ns_total) == (1, 50)


def test_rows_carry_launches_device_spans_updates_and_fate() -> None:
    rows = analyse(synthetic_stream()).graphs
    assert [r.launches for r in rows] == [3, 3]
    assert rows[0].device_ns_median == 40 and rows[0].device_ns_total == 120
    assert (rows[0].updates, rows[0].failed_updates) == (1, 1)
    assert rows[0].destroyed_at_ns is None and rows[1].destroyed_at_ns == 9_000
    assert rows[0].made is Made.CAPTURE and rows[0].capture_ns == 2_000


def test_churn_names_a_topology_instantiated_again_with_rows_and_times() -> None:
    assert analyse(synthetic_stream()).churn == ()
    (churn,) = analyse(synthetic_stream(recaptures=2)).churn
    assert churn.topology_hash == "a" * 64 and churn.instantiations == 3
    assert churn.peak_alive == 1 and churn.per_graph == 3
    assert churn.rows == (0, 2, 3) and churn.at_ns == (1_000, 5_000, 5_010)


def test_buckets_sharing_a_shape_alive_together_are_not_churn() -> None:
    """Synthetic: three executables of one graph made and kept (vLLM's buckets can share a
    launch shape); then one destroyed and made again: that one is churn (3 slots, 4 made)."""
    same = [Instantiated(i, (i,), Made.CAPTURE, 100 * i, 1, None, synthetic_snapshot("c"))
            for i in range(3)]
    assert analyse(Recording(tuple(same))).churn == ()
    again = Instantiated(3, (3,), Made.CAPTURE, 900, 1, None, synthetic_snapshot("c"))
    (churn,) = analyse(Recording((*same, again), destroyed=(Destroyed(1, 800),))).churn
    assert (churn.instantiations, churn.peak_alive, churn.per_graph) == (4, 3, 2)


def test_no_graph_launch_means_no_steady_state() -> None:
    rec = analyse(Recording(kernels=(KernelRun("k", 0, 5, 0),)))
    assert rec.steady is None and rec.overall.fraction == 0.0


def _result(rec: Recording, **kw: Any) -> RecordResult:
    return in_place(analyse(rec), exit_code=kw.pop("exit_code", 0),
                    ended=kw.pop("ended", Ended.EXIT))


def _doc(result: RecordResult) -> dict[str, Any]:
    ref = "examples/record/serve_torch.py:__main__"
    workload = {"ref": ref, "name": "serve_synthetic", "source_digest": "0" * 64,
                "method_digest": registry.method_digest("record"), "options": {}}
    return make_certificate("record", workload=workload, environment=environment(),
                            results=result.to_json(), verdict=result.verdict.to_json())


def test_result_round_trips_and_validates_as_a_record_certificate() -> None:
    result = _result(synthetic_stream(eager_steady=2, recaptures=1))
    again = RecordResult.from_json(result.to_json(), result.verdict.to_json())
    assert again == result
    cert = check_document(_doc(result), "record.json")
    assert cert.kind == "record" and isinstance(cert.result, RecordResult)
    assert contradictions(_doc(result)) == []


def test_evidence_catches_a_churn_list_that_does_not_match_the_rows() -> None:
    doc = _doc(_result(synthetic_stream(recaptures=1)))
    doc = copy.deepcopy(doc)
    doc["results"]["processes"][0]["churn"] = []
    doc["digest"] = compute_digest(doc)
    assert any("churn" in c for c in contradictions(doc))


@pytest.mark.parametrize(("code", "ended", "status"), [
    (0, Ended.EXIT, Status.PASS), (3, Ended.EXIT, Status.INCOMPLETE),
    (130, Ended.INTERRUPTED, Status.INCOMPLETE), (1, Ended.EXCEPTION, Status.INCOMPLETE)])
def test_verdict_is_incomplete_unless_the_program_ended_cleanly(code: int, ended: Ended,
                                                                status: Status) -> None:
    assert _result(synthetic_stream(), exit_code=code, ended=ended).verdict.status is status


def test_a_program_that_ran_no_kernel_is_incomplete() -> None:
    verdict = _result(Recording()).verdict
    assert verdict.status is Status.INCOMPLETE and "no kernel ran" in verdict.reasons[0]


def _rules(result: RecordResult, table: dict[str, Any]) -> list[Any]:
    cert = check_document(_doc(result), "record.json")
    return [r for r in certificate_rules(cert, parse_policy(table, "test"))
            if r.rule is not Rule.VERDICT]


def test_gate_keys_pass_a_good_run_and_fail_fallback_and_churn_naming_them() -> None:
    table = {"min_graph_coverage": 0.95, "max_instantiations_per_topology": 1,
             "max_steady_eager_launches": 0}
    assert all(r.status is RuleStatus.PASS for r in _rules(_result(synthetic_stream()), table))
    cov, inst, eager = _rules(_result(synthetic_stream(eager_steady=3)), table)
    assert cov.status is RuleStatus.FAIL and eager.status is RuleStatus.FAIL
    assert inst.status is RuleStatus.PASS
    assert any("fallback_kernel" in d for d in cov.details + eager.details)
    _, inst, _ = _rules(_result(synthetic_stream(recaptures=2)), table)
    assert inst.status is RuleStatus.FAIL and "a" * 12 in inst.details[0]
    assert "3 times, at most 1 alive at once" in inst.details[0]


def test_baseline_names_topologies_that_appeared_and_disappeared() -> None:
    base = check_document(_doc(_result(synthetic_stream())), "record.json")
    only_b = Recording(synthetic_stream().instantiated[1:],
                       kernels=(KernelRun("k", 0, 1, 101, 1),))
    now = check_document(_doc(_result(only_b)), "record.json")

    class Base:
        cert, path = base, "baseline/record.json"

    (rule,) = baseline_rules(now, Base(), parse_policy({}, "test"))  # type: ignore[arg-type]
    assert rule.status is RuleStatus.FAIL
    assert rule.details == (f"disappeared: {'a' * 12}",)
    (same,) = baseline_rules(base, Base(), parse_policy({}, "test"))  # type: ignore[arg-type]
    assert same.status is RuleStatus.PASS


def test_views_name_coverage_and_churn() -> None:
    result = _result(synthetic_stream(eager_steady=2, recaptures=1))
    lines = dict(summary_lines(result))
    assert "12 of" not in lines["coverage"] and "kernel launches by graphs" in lines["coverage"]
    assert lines["churn"].startswith("1 graph(s) instantiated again")
    html = record_html(result)
    assert "fallback_kernel" in html and "churn" in html


def test_gate_and_show_read_a_record_certificate_end_to_end(tmp_path: Path) -> None:
    """The gate command over a synthetic record certificate of the example (its real source
    digest, so it is not stale) with the example's policy: fallback fails, naming the
    kernel; show prints the tables."""
    from click.testing import CliRunner

    from graphcert.cli import cli

    ref = "examples/record/serve_torch.py:__main__"
    doc = _doc(_result(synthetic_stream(eager_steady=2)))
    doc["workload"]["source_digest"] = registry.source_digest(ref)
    doc["digest"] = compute_digest(doc)
    (tmp_path / "record-synthetic.json").write_text(json.dumps(doc))
    gate = CliRunner().invoke(cli, ["gate", str(tmp_path), "--policy",
                                    "examples/record/policy.toml", "--json"])
    assert gate.exit_code == 1, gate.output
    assert "fallback_kernel" in gate.output and "min_graph_coverage" in gate.output
    show = CliRunner().invoke(cli, ["show", str(tmp_path / "record-synthetic.json")])
    assert show.exit_code == 0, show.output
    assert "eager kernels in steady state" in show.output
