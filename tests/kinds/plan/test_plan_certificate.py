"""The plan certificate kind (issue 35 item 4): its typed result, schema, evidence, the gate's
max_plan_regret rule and `show`. Every plan here is synthetic (tests/_certfactory.plan_results:
a made-up curve and traffic, never measured)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from _certfactory import certificate, plan_results
from _oneline import one_line
from click.testing import CliRunner, Result

from graphcert.cert.digests import method_digest
from graphcert.cert.document import compute_digest, validate_certificate, write_certificate
from graphcert.cert.evidence import contradictions
from graphcert.cert.results.verdict import Status
from graphcert.cert.schemas import load_schema
from graphcert.cert.store import check_document
from graphcert.cli import cli
from graphcert.errors import InputError
from graphcert.gate.policy import PolicyError, parse_policy
from graphcert.gate.rules import Rule, RuleStatus, certificate_rules
from graphcert.kinds.plan.result import PlanResult, plan_result, traffic_digest
from graphcert.plan.costs import Budgets, CostCurve, CostPoint
from graphcert.plan.evaluate import evaluate
from graphcert.plan.optimise import Plan, choose
from graphcert.plan.traffic import Traffic

REPORTS = Path(__file__).resolve().parents[3] / "reports"
Doc = dict[str, Any]


def _sealed(results: Doc | None = None, **kw: Any) -> Doc:
    return certificate("plan", ref="examples/steps/torch_decode.py", results=results, **kw)


def _resealed(doc: Doc) -> Doc:
    doc["digest"] = compute_digest(doc)
    return doc


# ---------------------------------------------------------------------------- the value

def test_results_round_trip_exactly() -> None:
    doc = plan_results()
    result = PlanResult.from_json(doc)
    assert result.to_json() == doc
    assert json.loads(json.dumps(result.to_json())) == doc
    again = PlanResult.from_json(json.loads(json.dumps(doc)), result.verdict.to_json())
    assert again == result
    assert result.chosen.buckets == (1, 8, 64) and result.method.value == "exact"


def test_plan_result_is_built_from_the_planner_and_judged() -> None:
    curve = CostCurve(tuple(CostPoint(s, (10 + s) * 1e-6, (5 + 3 * s) * 1e-6, 1.0, s)
                            for s in (1, 4, 16)))  # synthetic
    traffic = Traffic.from_counts({2: 3, 16: 1}, "synthetic")
    plan = choose(traffic, curve, Budgets(max_graphs=1))
    assert isinstance(plan, Plan)
    over = evaluate((4, 16), traffic, curve, Budgets(max_graphs=1))  # faster, breaks max_graphs
    made = plan_result(plan, curve, traffic, [over])
    assert made.verdict.status is Status.PASS  # a list that breaks the budgets is no rival
    assert made.traffic_digest == traffic_digest(Traffic.from_sizes([2, 16, 2, 2]))
    with pytest.raises(InputError, match="not one of the compared lists"):
        plan_result(plan, curve, traffic, [over], current="current")
    with pytest.raises(InputError, match="repeat or say 'plan'"):
        plan_result(plan, curve, traffic, [over, over])


def test_a_faster_list_within_the_budgets_fails_the_plan() -> None:
    one = PlanResult.from_json(plan_results(max_graphs=1))  # the best single graph
    denser = evaluate((1, 8, 64), one.traffic, one.curve, Budgets(), label="denser")
    assert denser.fits and denser.expected_s < one.chosen.expected_s
    verdict = PlanResult.judge(one.chosen, [denser])
    assert verdict.status is Status.FAIL
    assert verdict.reasons[0].startswith("denser keeps the budgets and is faster per step")
    broke = evaluate((1, 8, 64), one.traffic, one.curve, one.budgets, label="denser")
    assert PlanResult.judge(one.chosen, [broke]).status is Status.PASS  # breaks max_graphs 1


# ---------------------------------------------------------------------------- schema

def test_the_schema_accepts_a_plan_and_is_a_valid_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(load_schema("plan"))
    assert validate_certificate(_sealed()) == []
    bench, plan = load_schema("bench"), load_schema("plan")
    for name in ("sha256", "tool", "gpu", "environment", "workload", "verdict", "signature"):
        assert plan["$defs"][name] == bench["$defs"][name], name


@pytest.mark.parametrize(("edit", "message"), [
    (lambda r: r.pop("chosen"), "missing field 'results.chosen'"),
    (lambda r: r["chosen"].update(expected_s=-1.0), "results.chosen.expected_s"),
    (lambda r: r["chosen"].update(eager_share=1.5), "above the maximum 1"),
    (lambda r: r["curve"][0].update(size=0), "below the minimum 1"),
    (lambda r: r["curve"][0].update(pool_bytes=1.5), "expected integer"),
    (lambda r: r["traffic"]["counts"].__setitem__(0, 0), "below the minimum 1"),
    (lambda r: r.update(method="greedy"), "is not one of 'exact', 'thinned'"),
    (lambda r: r["budgets"].update(max_graphs=0), "below the minimum 1"),
    (lambda r: r.update(extra=1), "unknown field 'results.extra'"),
])
def test_the_schema_refuses_bad_documents(edit: Any, message: str) -> None:
    doc = _sealed()
    edit(doc["results"])
    problems = validate_certificate(doc)
    assert problems and message in problems[0], problems


# ---------------------------------------------------------------------------- evidence

def test_a_sound_plan_has_no_contradiction() -> None:
    assert contradictions(_sealed()) == []


@pytest.mark.parametrize(("edit", "message"), [
    (lambda r: r["chosen"].update(expected_s=r["chosen"]["expected_s"] * 0.5),
     "results.chosen.expected_s is 1.505e-05 but the curve and traffic give 3.01e-05"),
    (lambda r: r["comparisons"][0].update(memory_bytes=1),
     "results.comparisons[0].memory_bytes is 1 but its buckets' pools sum to 309,329,920"),
    (lambda r: r["traffic"]["counts"].__setitem__(0, 51), "results.traffic.digest is"),
    (lambda r: r["curve"][2].update(replay_s=1e-3),  # size 4 serves size 3
     "results.comparisons[0].expected_s"),
    (lambda r: r["comparisons"][0].update(over_budget=[]), "over_budget is []"),
    (lambda r: r["curve"].reverse(), "the cost curve's sizes are not ascending"),
    (lambda r: r.update(current="nobody"), "current names 'nobody'"),
    (lambda r: r["chosen"].update(label="mine"), "are not 'plan' then distinct names"),
])
def test_evidence_refuses_figures_that_disagree(edit: Any, message: str) -> None:
    doc = _sealed()
    edit(doc["results"])
    found = contradictions(_resealed(doc))
    assert any(message in f for f in found), found
    with pytest.raises(Exception, match="contradicts itself"):
        check_document(doc, "plan.json")


def test_evidence_refuses_a_pass_the_figures_do_not_earn() -> None:
    results = plan_results(max_graphs=None)
    faster = copy.deepcopy(results["chosen"])
    faster["label"] = "mine"
    results["chosen"] = plan_results(max_graphs=1)["chosen"]  # the 1-graph list: slower
    results["comparisons"] = [faster]
    found = contradictions(_sealed(results))
    assert any("verdict.status says 'pass' but the plan's figures give 'fail'" in f
               for f in found), found


# ---------------------------------------------------------------------------- method digests

def test_the_plan_method_covers_the_planner_and_leaves_other_kinds_alone() -> None:
    from graphcert.cert.digests import method_files

    labels = {label for label, _ in method_files("plan")}
    assert {"graphcert/plan/optimise.py", "graphcert/plan/evaluate.py",
            "graphcert/kinds/plan/result.py"} <= labels
    for kind in ("topology", "bench", "sweep", "topology+step", "bench+step"):
        assert not any(lab.startswith("graphcert/plan/") for lab, _ in method_files(kind))
    recorded = {}
    for path in REPORTS.glob("*.json"):
        doc = json.loads(path.read_text())
        settings = doc["results"].get("settings") or {}
        kind = doc["kind"] + ("+step" if doc["kind"] in ("topology", "bench")
                              and settings.get("framework") else "")
        recorded.setdefault(kind, set()).add(doc["workload"]["method_digest"])
    assert recorded, "reports/ holds recorded certificates"
    for kind, digests in recorded.items():
        assert digests == {method_digest(kind)}, kind


# ---------------------------------------------------------------------------- the gate

def _rules(doc: Doc, table: dict[str, Any]) -> list[Any]:
    cert = check_document(doc, "plan.json")
    return [r for r in certificate_rules(cert, parse_policy(table, "test"))
            if r.rule is Rule.PLAN_REGRET]


def test_regret_passes_within_the_margin_and_fails_beyond_it() -> None:
    (ok,) = _rules(_sealed(), {"max_plan_regret": 0.05})
    assert ok.status is RuleStatus.PASS and "within 5.00% of the plan (+0.00%" in ok.summary
    slow = _sealed(plan_results(current=(64,)))
    (bad,) = _rules(slow, {"max_plan_regret": {"examples/steps/torch_decode.py": 0.05}})
    regret = PlanResult.from_json(slow["results"]).regret(
        PlanResult.from_json(slow["results"]).comparisons[1])
    assert bad.status is RuleStatus.FAIL
    assert bad.summary == (f"the committed list current is {regret:.2%} slower per step than "
                           f"the plan (max 5.00%)")
    assert "current (64)" in bad.details[0]
    assert _rules(slow, {"max_plan_regret": {"other": 0.05}}) == []  # another workload's


def test_a_plan_without_a_committed_list_fails_the_rule_unless_incomplete_is_allowed() -> None:
    doc = _sealed(plan_results(current=None))
    (rule,) = _rules(doc, {"max_plan_regret": 0.1})
    assert rule.status is RuleStatus.FAIL and "no committed list" in rule.summary
    (rule,) = _rules(doc, {"max_plan_regret": 0.1, "allow_incomplete": True})
    assert rule.status is RuleStatus.WARN


@pytest.mark.parametrize(("value", "message"), [
    (-0.1, "max_plan_regret must be a finite non-negative number"),
    ("5%", "max_plan_regret must be a finite non-negative number"),
    ({"w": float("nan")}, "max_plan_regret must be a finite non-negative number"),
])
def test_the_policy_key_is_checked(value: Any, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        parse_policy({"max_plan_regret": value}, "test")
    with pytest.raises(PolicyError, match="unknown key 'max_plan_regrets'"):
        parse_policy({"max_plan_regrets": 0.1}, "test")


def _cli(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.mark.usefixtures("synthetic_cli")
def test_gate_over_plan_certificates(tmp_path: Path) -> None:
    write_certificate(tmp_path / "r" / "plan.json", _sealed())
    (tmp_path / "g.toml").write_text("max_plan_regret = 0.05\n")
    passed = _cli("gate", "r", "--policy", "g.toml")
    assert passed.exit_code == 0, passed.output
    assert "gate: PASS" in passed.stdout
    write_certificate(tmp_path / "r" / "slow.json", certificate(
        "plan", ref="slow_step", results=plan_results(current=(64,))))
    failed = _cli("gate", "r", "--policy", "g.toml")
    assert failed.exit_code == 1, failed.output
    assert "max_plan_regret" in failed.stdout and "slower per step" in failed.stdout
    (tmp_path / "bad.toml").write_text("max_plan_regret = -1\n")
    line = one_line(_cli("gate", "r", "--policy", "bad.toml"))
    assert "max_plan_regret must be a finite non-negative number" in line


@pytest.mark.usefixtures("synthetic_cli")
def test_show_prints_the_plan_and_json_prints_the_document(tmp_path: Path) -> None:
    doc = _sealed()
    write_certificate(tmp_path / "plan.json", doc)
    shown = _cli("show", "plan.json")
    assert shown.exit_code == 0, shown.output
    out = shown.stdout
    for line in ("chosen        1, 8, 64 (3 graph(s), 30.10 µs per step)",
                 "vLLM          --cudagraph-capture-sizes 1 8 64",
                 "SGLang        --cuda-graph-bs 1 8 64",
                 "budgets       max_graphs 3",
                 "method        exact: 7 candidate(s)"):
        assert line in out, out
    assert "vllm:64" in out and "-11.96%" in out and "11 graphs > max_graphs 3" in out
    as_json = _cli("show", "plan.json", "--json")
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout) == doc
    report = _cli("report", "plan.json", "-o", "r.html")
    assert report.exit_code == 0, report.output
    assert "<code>--cudagraph-capture-sizes 1 8 64</code>" in (tmp_path / "r.html").read_text()
