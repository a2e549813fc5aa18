"""Span mode's results (graphcert profile --span) on synthetic figures (tests/_spancerts.py;
nothing here came from a GPU): JSON round trip, the schema and evidence, certificates from
before span mode still loading, the verdict and notes, the gate's max_replay_regression
(pass, fail, ambiguous, a mode mismatch), diff's span row and show's span lines."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from graphcert.cert.certificate import Certificate
from graphcert.cert.document import make_certificate, write_certificate
from graphcert.cert.evidence import contradictions
from graphcert.cert.results.verdict import Status
from graphcert.cert.schemas import load_schema, validate
from graphcert.errors import InputError
from graphcert.gate.policy import PolicyError, parse_policy
from graphcert.kinds.profile.compare import ModeMismatch, compare_spans, diff_results
from graphcert.kinds.profile.html import profile_html
from graphcert.kinds.profile.result import ProfiledClass, ProfileResult
from graphcert.kinds.profile.span import REPLAY_SPAN, ReplaySpan
from tests._certfactory import environment, workload
from tests._profilecerts import profile_certificate, synthetic_result
from tests._spancerts import synthetic_span, synthetic_span_class, synthetic_span_result
from tests.cli.test_cli_gate import clean_env, run  # noqa: F401 (clean_env: the same autouse fixture)


def span_certificate(result: ProfileResult | None = None) -> dict[str, Any]:
    """A sealed synthetic span-mode certificate with the verdict its result judges."""
    result = result or synthetic_span_result()
    return make_certificate("profile", workload=workload("scan", kind="profile"),
                            environment=environment("TEST-GPU"),
                            results=copy.deepcopy(result.to_json()),
                            verdict=result.verdict.to_json())


def put(path: str, cert: dict[str, Any]) -> None:
    write_certificate(Path(path), cert)


def test_replay_span_figures_and_json_round_trip() -> None:
    s = synthetic_span(distortion=1.02)
    assert s.median_ns == pytest.approx(10_000.0) and s.low_ns <= s.median_ns <= s.high_ns
    assert (s.replays, s.records, s.dropped) == (21, 21, 0)
    assert s.distortion == pytest.approx(1.02)
    low, high = s.distortion_interval or (0.0, 0.0)
    assert low <= s.distortion <= high
    assert ReplaySpan.from_json(json.loads(json.dumps(s.to_json()))) == s


def test_a_span_certificate_fits_its_schema_reads_back_and_passes() -> None:
    cert = span_certificate()
    jsonschema.validate(cert, load_schema("profile"))
    assert validate(cert, "profile") == [] and contradictions(cert) == []
    assert cert["results"]["mode"] == "span"
    (cls,) = cert["results"]["classes"]
    assert cls["profile"] is None and cls["overhead"] is None and "span" in cls
    typed = Certificate.from_document(cert)
    assert isinstance(typed.result, ProfileResult)
    assert typed.result == synthetic_span_result() and typed.result.mode == "span"
    assert typed.verdict.status is Status.PASS


def test_a_per_node_certificate_keeps_its_layout_and_loads() -> None:
    """Certificates from before span mode have no `mode` and no `span`: they load as per-node
    profiles, and a per-node result writes neither key."""
    doc = profile_certificate()["results"]
    assert "mode" not in doc and all("span" not in c for c in doc["classes"])
    result = ProfileResult.from_json(doc)
    assert result.mode == "nodes" and all(c.span is None for c in result.classes)


def test_span_verdict_incomplete_for_missing_records_dropped_or_no_span() -> None:
    short = synthetic_span_result(synthetic_span_class(span=synthetic_span(records=18)))
    assert short.verdict.status is Status.INCOMPLETE
    assert any("3 of 21 replays left no GRAPH_TRACE record" in r for r in short.verdict.reasons)
    dropped = synthetic_span_result(synthetic_span_class(span=synthetic_span(dropped=2)))
    assert any("dropped 2" in r for r in dropped.verdict.reasons)
    none = synthetic_span_result(synthetic_span_class(reason="synthetic: blocker timed out"))
    assert none.verdict.status is Status.INCOMPLETE
    assert any("synthetic: blocker timed out" in r for r in none.verdict.reasons)


def test_a_class_needs_a_span_a_profile_or_a_reason() -> None:
    with pytest.raises(InputError, match="no overhead figure and no reason"):
        ProfiledClass("c1", 1, "t" * 12, None, None)
    with pytest.raises(InputError, match="profile mode 'fast'"):
        ProfileResult("scan", 1, (), 1, mode="fast")


def test_distortion_above_one_percent_is_a_note() -> None:
    assert synthetic_span_result().notes == ()
    noted = synthetic_span_result(synthetic_span_class(span=synthetic_span(distortion=1.05)))
    (note,) = noted.notes
    assert "GRAPH_TRACE stretched a replay 1.050x" in note and "device clock" in note
    assert noted.verdict.status is Status.PASS
    faster = synthetic_span_result(synthetic_span_class(span=synthetic_span(distortion=0.9)))
    assert "read faster than untraced" in faster.notes[0]


def test_evidence_refuses_a_distortion_the_figures_do_not_give() -> None:
    cert = copy.deepcopy(span_certificate())
    cert["results"]["classes"][0]["span"]["distortion"] = 3.0
    resealed = make_certificate("profile", workload=cert["workload"],
                                environment=cert["environment"], results=cert["results"],
                                verdict=cert["verdict"], created=cert["created"])
    assert any("span.distortion" in f for f in contradictions(resealed))


def test_span_comparison_judges_the_median_with_both_intervals() -> None:
    base = synthetic_span_result()
    same = compare_spans(base, synthetic_span_result(
        synthetic_span_class(span=synthetic_span(1.02))), limit=0.05)[0]
    assert [(c.name, c.change.value) for c in same] == [(REPLAY_SPAN, "same")]
    slower = compare_spans(base, synthetic_span_result(
        synthetic_span_class(span=synthetic_span(1.2))), limit=0.05)[0]
    assert slower[0].change.value == "slower"
    wide = synthetic_span_result(synthetic_span_class(span=synthetic_span(jitter=3000)))
    ambiguous = compare_spans(wide, synthetic_span_result(synthetic_span_class(
        span=synthetic_span(1.1, jitter=3000))), limit=0.05)[0]
    assert ambiguous[0].change.value == "ambiguous"


def test_gate_fails_a_slower_replay_and_the_policy_can_widen_it() -> None:
    put("base/profile-scan.json", span_certificate())
    put("reports/profile-scan.json", span_certificate(synthetic_span_result(
        synthetic_span_class(span=synthetic_span(1.2)))))
    result = run("gate", "reports", "--baseline", "base")
    assert result.exit_code == 1, result.output
    assert "[max_replay_regression]" in result.stdout and "replay span" in result.stdout
    assert "[max_node_regression]" not in result.stdout
    Path("policy.toml").write_text("max_replay_regression = 0.3\n")
    widened = run("gate", "reports", "--baseline", "base", "--policy", "policy.toml")
    assert widened.exit_code == 0, widened.output


def test_gate_passes_a_span_profile_against_itself() -> None:
    put("base/profile-scan.json", span_certificate())
    put("reports/profile-scan.json", span_certificate())
    result = run("gate", "reports", "--baseline", "base")
    assert result.exit_code == 0, result.output
    assert "max_replay_regression pass" in result.stdout


def test_gate_warns_on_an_ambiguous_replay() -> None:
    put("base/profile-scan.json", span_certificate(synthetic_span_result(
        synthetic_span_class(span=synthetic_span(jitter=3000)))))
    put("reports/profile-scan.json", span_certificate(synthetic_span_result(
        synthetic_span_class(span=synthetic_span(1.1, jitter=3000)))))
    result = run("gate", "reports", "--baseline", "base")
    assert result.exit_code == 0, result.output
    assert "(1 ambiguous)" in result.stdout


@pytest.mark.parametrize("span_now", [True, False])
def test_a_span_profile_and_a_per_node_one_are_not_comparable(span_now: bool) -> None:
    span, nodes = span_certificate(), profile_certificate()
    put("base/profile-scan.json", nodes if span_now else span)
    put("reports/profile-scan.json", span if span_now else nodes)
    result = run("gate", "reports", "--baseline", "base")
    assert result.exit_code == 1, result.output
    # under the rule of the current profile's mode
    rule = "[max_replay_regression]" if span_now else "[max_node_regression]"
    assert rule in result.stdout and "not comparable" in result.stdout
    assert "profile the baseline in the same mode" in result.stdout
    with pytest.raises(ModeMismatch):
        diff_results(Certificate.from_document(nodes), Certificate.from_document(span),
                     min_noise=0.005)


def test_policy_reads_max_replay_regression_per_workload() -> None:
    policy = parse_policy({"max_replay_regression": {"scan": 0.1, "*": 0.2}}, "synthetic")
    assert policy.for_workload(policy.max_replay_regression, "scan") == 0.1
    assert policy.for_workload(policy.max_replay_regression, "chain") == 0.2
    assert policy.to_dict()["max_replay_regression"] == {"scan": 0.1, "*": 0.2}
    with pytest.raises(PolicyError, match="max_replay_regression must be a finite"):
        parse_policy({"max_replay_regression": "fast"}, "synthetic")


def test_diff_of_two_span_profiles_is_the_span_row() -> None:
    put("a.json", span_certificate())
    put("b.json", span_certificate(synthetic_span_result(
        synthetic_span_class(span=synthetic_span(1.2)))))
    result = run("diff", "a.json", "b.json")
    assert result.exit_code == 0, result.output
    assert "span" in result.stdout and "+20.0%" in result.stdout
    data = json.loads(run("diff", "a.json", "b.json", "--json").stdout)
    (row,) = data["nodes"]
    assert row["index"] is None and row["name"] == REPLAY_SPAN and row["change"] == "slower"


def test_show_prints_the_span_distortion_and_untraced_time_and_no_node_table() -> None:
    put("p.json", span_certificate(synthetic_span_result(
        synthetic_span_class(span=synthetic_span(distortion=1.05)))))
    result = run("show", "p.json")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "span mode" in out and "replay span" in out and "10.00 µs" in out
    assert "distortion" in out and "1.050x" in out and "untraced" in out
    assert "timed nodes by share" not in out and "critical path" not in out
    html = profile_html(synthetic_span_result())
    assert "replay span" in html and "<svg" not in html


def test_html_and_show_of_a_class_without_span_say_why() -> None:
    result = synthetic_span_result(synthetic_span_class(reason="synthetic: blocker timed out"))
    assert "not measured: synthetic: blocker timed out" in profile_html(result)


def test_node_and_path_rules_skip_span_classes() -> None:
    from graphcert.kinds.profile.compare import compare_profiles

    comps, _ = compare_profiles(synthetic_result(), synthetic_result(), node_limit=0.05,
                                path_limit=0.05)
    assert comps
    mixed = ProfileResult("scan", 21, (synthetic_span_class(),), 1)
    assert compare_profiles(mixed, mixed, node_limit=0.05, path_limit=0.05) == ([], [])


def test_a_class_without_a_span_is_compared_with_nothing_and_warns() -> None:
    """Allowed incomplete, a span class the run could not time leaves the replay rule with
    nothing to compare: a warning naming that, not a pass."""
    put("base/profile-scan.json", span_certificate())
    put("reports/profile-scan.json", span_certificate(synthetic_span_result(
        synthetic_span_class(reason="synthetic: the driver would not instantiate it twice"))))
    Path("policy.toml").write_text("allow_incomplete = true\n")
    result = run("gate", "reports", "--baseline", "base", "--policy", "policy.toml")
    out = " ".join(result.stdout.split())
    assert result.exit_code == 0, result.output
    assert "no replay span(s) to compare with base/profile-scan.json" in out
    # the incomplete verdict allowed is one warning, the replay rule the other
    assert "n=256: no replay span in the current profile" in out and "2 warning(s)" in out
