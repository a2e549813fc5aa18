"""A record certificate of several processes (SYNTHETIC: made-up pids, argv, GPUs and event
streams, analysed as graphcert would): its JSON and schema, the verdict over processes, the
gate's rules per process and over the whole, allow_eager_ranges, the evidence check of a
tampered `overall`, the views, and certificates of the single-process layout (the real
GPU recordings under reports/ and tests/fixtures/record/) read as one process."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from _certfactory import environment

from graphcert.cert.document import compute_digest, make_certificate
from graphcert.cert.evidence import contradictions
from graphcert.cert.results.verdict import Status
from graphcert.cert.schemas import check, load_schema
from graphcert.cert.store import check_document
from graphcert.gate.policy import PolicyError, parse_policy
from graphcert.gate.rules import Rule, RuleResult, RuleStatus
from graphcert.kinds.record.html import record_html
from graphcert.kinds.record.result import RecordResult
from graphcert.kinds.record.rules import record_rules
from graphcert.kinds.record.views import process_rows, record_rows, topology_rows
from graphcert.recording import Recorded, Recording, analyse
from graphcert.recording.processes import ProcessEnded
from graphcert.recording.regions import OUTSIDE, UNJOINED, EagerRegion, Regions
from graphcert.workloads import registry
from tests._recordfactory import synthetic_process, synthetic_run
from tests.kinds.record.test_record_synthetic import synthetic_stream

ROOT = Path(__file__).resolve().parents[3]
# a real GPU recording in the single-process layout (tests/fixtures/README.md), and the real
# recordings of record -- COMMAND in the layout of processes
LEGACY = sorted(ROOT.glob("tests/fixtures/record_legacy/*.json"))
REAL = sorted([*ROOT.glob("reports/record-*.json"), *ROOT.glob("tests/fixtures/record/*.json")])
WORKER = ("python", "worker.py", "--rank", "1")


def _eager_in(region: str, n: int) -> Recorded:
    """A synthetic stream with `n` eager launches in steady state, all in NVTX `region`."""
    rec = analyse(synthetic_stream(eager_steady=n))
    return replace(rec, regions=Regions(3, (EagerRegion(region, n, 5 * n),)))


def _tp(worker_eager: int = 0, region: str = "decode > selfcheck 3") -> RecordResult:
    """A front end that launched nothing, rank 0 all graphs, rank 1 with `worker_eager`
    eager launches in steady state (the same two topologies on another GPU)."""
    front = synthetic_process(analyse(Recording()), 100, ppid=1, argv=("python", "serve.py"),
                              gpu=None, memory=None, exit_code=0)
    rank0 = synthetic_process(_eager_in(region, 0), 101, ppid=100,
                              argv=("python", "worker.py", "--rank", "0"), gpu=0)
    rank1 = synthetic_process(_eager_in(region, worker_eager), 102, ppid=100, argv=WORKER,
                              gpu=1)
    return synthetic_run((front, rank0, rank1))


def _doc(result: RecordResult) -> dict[str, Any]:
    workload = {"ref": "serve.py:__main__", "name": "serve", "source_digest": "0" * 64,
                "method_digest": registry.method_digest("record"), "options": {}}
    return make_certificate("record", workload=workload, environment=environment(),
                            results=result.to_json(), verdict=result.verdict.to_json())


def _rules(result: RecordResult, table: dict[str, Any]) -> dict[Rule, RuleResult]:
    return {r.rule: r for r in record_rules(result, parse_policy(table, "test"), "serve",
                                            "serve.py:__main__")}


def test_a_run_of_processes_round_trips_validates_and_agrees_with_itself() -> None:
    result = _tp(worker_eager=3)
    doc = result.to_json()
    assert [p["pid"] for p in doc["processes"]] == [100, 101, 102]
    assert doc["collector"] == "injection"
    assert doc["overall"]["processes"] == 3 and doc["overall"]["graphs"] == 4
    assert doc["overall"]["coverage"]["steady"]["eager_kernels"] == 3
    assert RecordResult.from_json(doc, result.verdict.to_json()) == result
    cert = check_document(_doc(result), "record.json")
    assert isinstance(cert.result, RecordResult) and contradictions(_doc(result)) == []
    # the whole: every process's graphs in process order, renumbered, each with its pid
    assert [(g.index, g.pid) for g in result.recorded.graphs] == [
        (0, 101), (1, 101), (2, 102), (3, 102)]


def test_the_schema_refuses_a_process_without_its_pid() -> None:
    full = load_schema("record")
    schema = {"$defs": full["$defs"], **full["$defs"]["record"]}
    doc = _tp().to_json()
    assert check(doc, schema) == []
    del doc["processes"][1]["pid"]
    assert check(doc, schema)


def test_evidence_flags_a_tampered_overall_and_a_killed_process_under_a_clean_verdict() -> None:
    doc = _doc(_tp(worker_eager=3))
    doc["results"]["overall"]["coverage"]["steady"]["eager_kernels"] = 0
    doc["digest"] = compute_digest(doc)
    assert any(c.startswith("results.overall.coverage: does not match the merge")
               for c in contradictions(doc))
    killed = _doc(_tp())
    killed["results"]["processes"][2]["ended"] = "killed"
    killed["digest"] = compute_digest(killed)
    found = contradictions(killed)
    assert any("pid 102 (python worker.py --rank 1) did not end whole" in c for c in found)


@pytest.mark.parametrize("ended", [ProcessEnded.KILLED, ProcessEnded.OUTLIVED])
def test_a_process_killed_or_outliving_the_command_makes_the_verdict_incomplete(
        ended: ProcessEnded) -> None:
    result = _tp()
    procs = list(result.processes)
    procs[2] = replace(procs[2], info=replace(procs[2].info, ended=ended))
    verdict = synthetic_run(procs).verdict
    assert verdict.status is Status.INCOMPLETE
    assert any(r.startswith(f"pid 102 (python worker.py --rank 1) was {ended.value}")
               for r in verdict.reasons)


def test_problems_and_dropped_records_are_named_per_process() -> None:
    rec = replace(analyse(synthetic_stream()), dropped_records=7)
    bad = synthetic_process(rec, 7, argv=WORKER, problems=("CUPTI is held by another tool",))
    verdict = synthetic_run((bad,)).verdict
    assert verdict.status is Status.INCOMPLETE
    assert "pid 7 (python worker.py --rank 1): CUPTI is held by another tool" in verdict.reasons
    assert any(r.startswith("pid 7 (python worker.py --rank 1): CUPTI dropped 7")
               for r in verdict.reasons)


def test_a_process_that_launched_nothing_is_listed_not_failed() -> None:
    result = _tp()
    assert result.verdict.status is Status.PASS
    rules = _rules(result, {"min_graph_coverage": 0.99, "max_steady_eager_launches": 0,
                            "max_instantiations_per_topology": 1})
    for rule in rules.values():
        assert rule.status is RuleStatus.PASS
        assert rule.details[-1] == ("pid 100 (python serve.py) launched no kernel: not held "
                                    "to the rule")


def test_no_kernel_in_any_process_is_incomplete_and_fails_coverage() -> None:
    empty = analyse(Recording())
    run = synthetic_run((synthetic_process(empty, 1), synthetic_process(empty, 2)))
    assert run.verdict.status is Status.INCOMPLETE
    assert "no kernel ran on the GPU in any process (the command never used CUDA?)" in \
        run.verdict.reasons
    assert _rules(run, {"min_graph_coverage": 0.5})[Rule.GRAPH_COVERAGE].status \
        is RuleStatus.FAIL


def test_a_process_failing_alone_is_named_even_where_the_whole_passes() -> None:
    """Each process and the whole are held to the same figure: rank 1's 3 eager launches
    fail a limit of 2 (rank 1 named, rank 0 not), and a coverage floor the whole and rank 1
    miss names rank 1 beside the whole's figure."""
    result = _tp(worker_eager=3)
    eager = _rules(result, {"max_steady_eager_launches": 2})[Rule.STEADY_EAGER]
    assert eager.status is RuleStatus.FAIL
    assert any(d.startswith("pid 102 (python worker.py --rank 1): 3 eager kernel launch")
               for d in eager.details)
    assert not any(d.startswith("pid 101") for d in eager.details)
    # the whole: 24 graph kernels of 27 (88.9%); rank 0 100%, rank 1 12 of 15 (80%)
    cov = _rules(result, {"min_graph_coverage": 0.85})[Rule.GRAPH_COVERAGE]
    assert cov.status is RuleStatus.FAIL and "88.89% of 27" in cov.summary
    assert "1 of 2 processes fail it on their own" in cov.summary
    assert any(d.startswith("pid 102 (python worker.py --rank 1): steady-state graph "
                            "coverage 80.00%") for d in cov.details)


def test_churn_is_named_by_process() -> None:
    churning = synthetic_process(analyse(synthetic_stream(recaptures=2)), 9, argv=WORKER)
    calm = synthetic_process(analyse(synthetic_stream()), 8)
    rule = _rules(synthetic_run((calm, churning)),
                  {"max_instantiations_per_topology": 1})[Rule.INSTANTIATIONS]
    assert rule.status is RuleStatus.FAIL
    assert any(d.startswith("pid 9 (python worker.py --rank 1): topology aaaaaaaaaaaa")
               for d in rule.details)


def test_allow_eager_ranges_leaves_out_launches_in_matching_ranges() -> None:
    result = _tp(worker_eager=3, region="decode > selfcheck 3")
    table = {"max_steady_eager_launches": 0, "min_graph_coverage": 0.99}
    allowed = _rules(result, {**table, "allow_eager_ranges": ["selfcheck*"]})
    for rule in (allowed[Rule.STEADY_EAGER], allowed[Rule.GRAPH_COVERAGE]):
        assert rule.status is RuleStatus.PASS, rule
        assert ("allowed by allow_eager_ranges: 3 eager launch(es) in ranges matching "
                "'selfcheck*'") in rule.details
    assert "0 eager kernel launch(es) in steady state (limit 0), 3 more allowed" == \
        allowed[Rule.STEADY_EAGER].summary
    # a glob matching no component still fails, naming the range
    other = _rules(result, {**table, "allow_eager_ranges": ["prefill*", "selfcheck"]})
    assert other[Rule.STEADY_EAGER].status is RuleStatus.FAIL
    assert "launched in NVTX range decode > selfcheck 3: 3" in other[Rule.STEADY_EAGER].details
    # per workload, as the other keys: another workload's globs do not apply
    table_of = _rules(result, {**table, "allow_eager_ranges": {"other": ["*"],
                                                               "serve": ["decode"]}})
    assert table_of[Rule.STEADY_EAGER].status is RuleStatus.PASS


@pytest.mark.parametrize("region", [OUTSIDE, UNJOINED])
def test_a_glob_of_everything_allows_ranges_not_launches_outside_them(region: str) -> None:
    result = _tp(worker_eager=3, region=region)
    got = _rules(result, {"max_steady_eager_launches": 0, "allow_eager_ranges": ["*"]})
    assert got[Rule.STEADY_EAGER].status is RuleStatus.FAIL
    assert not any(d.startswith("allowed by") for d in got[Rule.STEADY_EAGER].details)


@pytest.mark.parametrize("value", ["selfcheck*", [1], [""], {"serve": "x"}])
def test_allow_eager_ranges_must_be_a_list_of_globs(value: object) -> None:
    with pytest.raises(PolicyError, match="allow_eager_ranges must be a list of NVTX range"):
        parse_policy({"allow_eager_ranges": value}, "test")


def test_views_show_the_processes_and_the_topologies_across_them() -> None:
    result = _tp(worker_eager=3)
    rows = process_rows(result)
    assert [r[0] for r in rows] == ["100", "101", "102"]
    assert rows[0][7] == "launched no kernel" and rows[2][8] == "3"
    assert rows[2][3] == "1 GPU-syntheti"
    assert topology_rows(result) == [("a" * 12, "2", "101, 102"), ("b" * 12, "2", "101, 102")]
    graphs, _, _, _ = record_rows(result)
    assert graphs[2][:2] == ("2", "102")  # the pid column after the index
    assert "topologies across processes" in record_html(result)


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_recordings_of_processes_read_back_as_they_were_written(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    result = RecordResult.from_json(doc["results"], doc["verdict"])
    assert not result.legacy and result.collector == "injection"
    assert all(p.info.pid is not None for p in result.processes)
    assert result.to_json() == doc["results"]
    assert result.recorded.overall.kernels == sum(p.recorded.overall.kernels
                                                   for p in result.processes)


@pytest.mark.parametrize("path", LEGACY, ids=lambda p: p.name)
def test_the_single_process_layout_reads_as_one_process_in_place(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    result = RecordResult.from_json(doc["results"], doc["verdict"])
    (only,) = result.processes
    assert only.info.pid is None and only.info.ppid is None and result.legacy
    assert result.collector == "in-place" and only.info.ended is ProcessEnded.IN_PLACE
    assert only.info.argv == result.program
    assert result.recorded.graphs == only.recorded.graphs  # the whole is the one process
    assert result.to_json() == doc["results"]
    assert process_rows(result) == [] and topology_rows(result) == []


def test_a_mutated_process_list_is_refused_by_the_schema() -> None:
    doc = _doc(_tp())
    bad = copy.deepcopy(doc)
    bad["results"]["processes"][0]["ended"] = "vanished"
    bad["digest"] = compute_digest(bad)
    with pytest.raises(Exception, match="vanished|processes"):
        check_document(bad, "record.json")


def test_a_collector_graphcert_does_not_know_is_refused_like_any_bad_field() -> None:
    doc = {**_tp().to_json(), "collector": "nsys"}  # SYNTHETIC: no such collector
    with pytest.raises(ValueError, match="'collector': expected one of injection, in-place"):
        RecordResult.from_json(doc)
