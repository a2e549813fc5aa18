"""What-if attribution's pure side on synthetic figures (nothing here came from a GPU): the
paired estimator, the node ranking and selection words, the JSON round trip, the schema and
evidence, certificates written before what-if (recorded ones included) loading and
rendering, and the view's table."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
from pathlib import Path

import jsonschema
import pytest
from rich.console import Console

from graphcert.cert.evidence import contradictions
from graphcert.cert.schemas import load_schema, validate
from graphcert.kinds.profile.result import ProfiledClass, ProfileResult
from graphcert.kinds.profile.views import WHATIF_TITLE, profile_view, what_if_rows
from graphcert.kinds.profile.whatif import (
    NodeContribution,
    WhatIf,
    contribution,
    ranked_nodes,
    selection_text,
)
from tests._profilecerts import profile_certificate, synthetic_class, synthetic_result

ROOT = Path(__file__).resolve().parents[3]
OLD_CERTIFICATES = sorted((ROOT / "tests" / "fixtures" / "profile").rglob("*.json"))


def _synthetic_what_if(cls: ProfiledClass) -> WhatIf:
    """Made-up contributions for the class's two longest nodes (synthetic)."""
    first, second = ranked_nodes(cls.profile)[:2]
    return WhatIf(9000.0, 8900.0, 9100.0,
                  (NodeContribution(first, 4100.0, 4000.0, 4200.0, 30),
                   NodeContribution(second, 20.0, -30.0, 60.0, 30)),
                  selection_text(2, 5, 2, 0, 5.0), 3)


def _render(result: ProfileResult, width: int = 160) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    for part in profile_view("scan", result):
        console.print(part)
    return console.export_text()


def test_contribution_is_the_median_of_paired_differences() -> None:
    enabled = [1000.0 + i for i in range(9)]  # synthetic ns; the node is worth 300 each pair
    disabled = [e - 300.0 + (5.0 if i % 2 else -5.0) for i, e in enumerate(enabled)]
    got = contribution(4, enabled, disabled)
    assert got.index == 4 and got.pairs == 9
    assert got.contribution_ns == pytest.approx(305.0)
    assert got.low_ns <= got.contribution_ns <= got.high_ns
    assert (got.low_ns, got.high_ns) == pytest.approx((295.0, 305.0))


def test_a_drift_common_to_both_halves_of_a_pair_cancels() -> None:
    """The replays slow by 50 ns a pair (clocks drifting): each difference stays the node's."""
    enabled = [1000.0 + 50 * i for i in range(20)]
    disabled = [e - 200.0 for e in enabled]
    got = contribution(0, enabled, disabled)
    assert (got.low_ns, got.contribution_ns, got.high_ns) == pytest.approx((200.0,) * 3)


def test_a_node_off_the_critical_path_reads_about_zero() -> None:
    enabled = [1000.0, 1003.0, 998.0, 1001.0, 999.0, 1002.0]  # synthetic: slack, no saving
    disabled = [1001.0, 1000.0, 999.0, 1003.0, 998.0, 1000.0]
    got = contribution(2, enabled, disabled)
    assert got.low_ns <= 0.0 <= got.high_ns


def test_unpaired_samples_are_refused() -> None:
    with pytest.raises(ValueError, match="pairs"):
        contribution(1, [1.0, 2.0], [1.0])


def test_ranked_nodes_are_disableable_nodes_longest_first() -> None:
    cls = synthetic_class()  # nodes 0..3 kernels (1000, 4000, 2000, 1000 ns), 5 a memset
    assert ranked_nodes(cls.profile) == [1, 2, 0, 3, 5]


def test_selection_says_top_k_and_the_budget() -> None:
    assert selection_text(5, 5, 16, 0, 5.0) == "all 5 kernel, memcpy and memset nodes"
    text = selection_text(2, 40, 16, 14, 5.0)
    assert text.startswith("the 16 longest of 40 kernel, memcpy and memset nodes")
    assert "14 of them not reached within the 5 s budget (2 attributed)" in text


def test_what_if_round_trips_and_fits_schema_and_evidence() -> None:
    cls = synthetic_class()
    with_w = dataclasses.replace(cls, what_if=_synthetic_what_if(cls))
    cert = profile_certificate(synthetic_result(with_w))
    jsonschema.validate(cert, load_schema("profile"))
    assert validate(cert, "profile") == [] and contradictions(cert) == []
    back = ProfiledClass.from_json(json.loads(json.dumps(with_w.to_json())))
    assert back == with_w


def test_a_class_says_why_what_if_did_not_run() -> None:
    cls = dataclasses.replace(synthetic_class(), what_if_reason="off (--what-if 0)")
    doc = cls.to_json()
    assert doc["what_if"] is None and doc["what_if_reason"] == "off (--what-if 0)"
    assert ProfiledClass.from_json(doc) == cls
    cert = profile_certificate(synthetic_result(cls))
    assert validate(cert, "profile") == [] and contradictions(cert) == []
    assert "what-if: off (--what-if 0)" in _render(synthetic_result(cls))


@pytest.mark.parametrize(("tamper", "said"), [
    (lambda w: {**w, "nodes": [{**w["nodes"][0], "low_ns": 5000.0}, w["nodes"][1]]},
     "outside its interval"),
    (lambda w: {**w, "nodes": [{**w["nodes"][0], "index": 4}, w["nodes"][1]]},
     "not a timed node"),
    (lambda w: {**w, "nodes": [w["nodes"][0], w["nodes"][0]]}, "attributed twice"),
])
def test_evidence_refuses_a_contribution_outside_its_interval_or_node(tamper: object,
                                                                      said: str) -> None:
    cls = synthetic_class()
    cert = profile_certificate(synthetic_result(
        dataclasses.replace(cls, what_if=_synthetic_what_if(cls))))
    bad = copy.deepcopy(cert)
    doc = bad["results"]["classes"][0]
    doc["what_if"] = tamper(doc["what_if"])  # type: ignore[operator]
    assert any(said in c for c in contradictions(bad))


def test_certificates_from_before_what_if_load_and_render() -> None:
    """The recorded fixtures from before what-if lack both keys: they read as None and render
    without a what-if table."""
    assert OLD_CERTIFICATES, "no recorded profile certificate found"
    for path in OLD_CERTIFICATES:
        doc = json.loads(path.read_text())
        classes = doc["results"]["classes"]
        assert all("what_if" not in c for c in classes), path
        result = ProfileResult.from_json(doc["results"])
        assert all(c.what_if is None and c.what_if_reason is None for c in result.classes)
        assert WHATIF_TITLE not in _render(result)


def test_the_view_shows_each_contribution_with_its_interval() -> None:
    cls = synthetic_class()
    w = _synthetic_what_if(cls)
    with_w = dataclasses.replace(cls, what_if=w)
    rows = what_if_rows(with_w)
    assert rows == [("1", "k_1", "4.00 µs", "4.10 µs [4.00, 4.20]"),
                    ("2", "k_2", "2.00 µs", "0.02 µs [-0.03, 0.06]")]
    text = _render(synthetic_result(with_w))
    assert WHATIF_TITLE in text and w.selection in text
    assert "replay 9.00 µs [8.90, 9.10] untraced" in text


def test_the_html_report_shows_the_what_if_table_or_why_not() -> None:
    from graphcert.kinds.profile.html import profile_html

    cls = synthetic_class()
    with_w = dataclasses.replace(cls, what_if=_synthetic_what_if(cls))
    page = profile_html(synthetic_result(with_w))
    # free text is laid out with no-break spans around its short tokens: read its words
    assert "what a replay saves without each node" in page and "contribution [95%]" in page
    assert "4.10 µs [4.00, 4.20]" in page
    off = dataclasses.replace(cls, what_if_reason="off (--what-if 0)")
    why = profile_html(synthetic_result(off))
    assert "(--what-if</span> 0)" in why and "contribution [95%]" not in why
