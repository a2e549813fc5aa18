"""Profile certificates through the gate, diff, show and the HTML report, on synthetic
profiles (tests/_profilecerts.py; nothing here came from a GPU): node and critical-path
regressions judged with intervals, the refusal of another topology naming its first differing
node, nodes lined up by canonical index, the table and the inline SVG timeline."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphcert.cert.document import write_certificate
from graphcert.gate.policy import parse_policy
from graphcert.kinds.profile.compare import TopologyMismatch, compare_profiles
from graphcert.kinds.profile.html import branches, profile_html, timeline_svg
from graphcert.model import NodeKind
from tests._profilecerts import (
    SYNTHETIC_EDGES,
    SYNTHETIC_KINDS,
    profile_certificate,
    synthetic_class,
    synthetic_graph,
    synthetic_result,
)
from tests.cli.test_cli_gate import clean_env, run  # noqa: F401 (clean_env: the same autouse fixture)


def put(path: str, cert: dict[str, Any]) -> None:
    write_certificate(Path(path), cert)


SLOWER_NODE_1 = [1.0, 1.5, 1.0, 1.0, 1.0, 1.0]  # synthetic: node 1 (k_1) 50% slower


def test_gate_fails_a_node_slower_than_its_baseline_naming_index_and_kernel() -> None:
    put("base/profile-scan.json", profile_certificate())
    put("reports/profile-scan.json",
        profile_certificate(synthetic_result(synthetic_class(scale=SLOWER_NODE_1))))
    result = run("gate", "reports", "--baseline", "base")
    assert result.exit_code == 1, result.output
    assert "[max_node_regression]" in result.stdout
    assert "node 1 (k_1)" in result.stdout and "+50.0%" in result.stdout
    assert "[max_critical_path_regression]" in result.stdout  # 0-1-3-4-5 grows by 2 us


def test_gate_passes_within_the_limit_and_the_policy_can_widen_it() -> None:
    put("base/profile-scan.json", profile_certificate())
    put("reports/profile-scan.json",
        profile_certificate(synthetic_result(synthetic_class(scale=[1.01] * 6))))
    assert run("gate", "reports", "--baseline", "base").exit_code == 0
    put("reports/profile-scan.json",
        profile_certificate(synthetic_result(synthetic_class(scale=SLOWER_NODE_1))))
    Path("policy.toml").write_text("max_node_regression = 0.6\n"
                                   "max_critical_path_regression = 0.6\n")
    result = run("gate", "reports", "--baseline", "base", "--policy", "policy.toml")
    assert result.exit_code == 0, result.output


def test_overlapping_intervals_are_ambiguous_never_a_fail() -> None:
    base = synthetic_result(synthetic_class(jitter=2000))
    cur = synthetic_result(synthetic_class(jitter=2000, scale=[1.0, 1.1, 1, 1, 1, 1]))
    comps, _ = compare_profiles(base, cur, node_limit=0.05, path_limit=0.05)
    node1 = next(c for c in comps if c.index == 1)
    assert node1.change.value == "ambiguous" and node1.diff > 0.05
    cur = synthetic_result(synthetic_class(jitter=10, scale=[1.0, 1.1, 1, 1, 1, 1]))
    base = synthetic_result(synthetic_class(jitter=10))
    comps, _ = compare_profiles(base, cur, node_limit=0.05, path_limit=0.05)
    assert next(c for c in comps if c.index == 1).change.value == "slower"


def test_another_topology_is_refused_naming_the_first_differing_node() -> None:
    kinds = list(SYNTHETIC_KINDS)
    kinds[2] = NodeKind.MEMSET
    other = synthetic_class(g=synthetic_graph(kinds, SYNTHETIC_EDGES), topology="other")
    with pytest.raises(TopologyMismatch, match="node 2 is kernel k_2 in the baseline but "
                                               "memset"):
        compare_profiles(synthetic_result(), synthetic_result(other), node_limit=0.05,
                         path_limit=0.05)
    put("base/profile-scan.json", profile_certificate())
    put("reports/profile-scan.json", profile_certificate(synthetic_result(other)))
    result = run("gate", "reports", "--baseline", "base")
    assert result.exit_code == 1 and "different topologies (node 2 is kernel" in result.stdout
    put("a.json", profile_certificate())
    put("b.json", profile_certificate(synthetic_result(other)))
    refused = run("diff", "a.json", "b.json")
    assert refused.exit_code == 2 and "different topologies" in refused.stderr
    assert len([ln for ln in refused.stderr.splitlines() if ln.strip()]) <= 2  # one line+hint


def test_an_extra_edge_is_another_topology() -> None:
    edges = (*SYNTHETIC_EDGES, (1, 2))
    other = synthetic_class(g=synthetic_graph(SYNTHETIC_KINDS, edges), topology="other")
    with pytest.raises(TopologyMismatch, match="edge 1 -> 2 is in one profile only"):
        compare_profiles(synthetic_result(), synthetic_result(other), node_limit=0.05,
                         path_limit=0.05)


def test_diff_lines_nodes_up_by_canonical_index() -> None:
    put("a.json", profile_certificate())
    put("b.json", profile_certificate(synthetic_result(synthetic_class(scale=SLOWER_NODE_1))))
    result = run("diff", "a.json", "b.json")
    assert result.exit_code == 0, result.output
    assert "profile certificates" in result.stdout and "+50.0%" in result.stdout
    data = json.loads(run("diff", "a.json", "b.json", "--json").stdout)
    rows = {(n["index"]): n for n in data["nodes"]}
    assert sorted(i for i in rows if i is not None) == [0, 1, 2, 3, 5]  # 4 is untimed
    assert rows[1]["change"] == "slower" and rows[1]["name"] == "k_1"
    assert rows[0]["change"] == "same"


def test_show_prints_the_top_nodes_path_gaps_untimed_and_overhead() -> None:
    put("p.json", profile_certificate())
    result = run("show", "p.json")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "top 5 of 5 timed nodes by share" in out
    assert "critical path" in out and "0 -> 1 -> 3 -> 4 -> 5" in out
    assert "largest gaps on dependent edges" in out
    assert "untimed 4" in out and "an empty node does no work" in out
    assert "1.002x" in out
    # node 1 (4 us of 8.5) is first by share
    first = next(ln for ln in out.splitlines() if re.match(r"\s*\d+\s+kernel\s+k_", ln))
    assert first.split()[0] == "1"


def test_policy_reads_the_profile_keys_per_workload() -> None:
    policy = parse_policy({"max_node_regression": {"scan": 0.1, "*": 0.2},
                           "max_critical_path_regression": 0.03}, "synthetic")
    assert policy.for_workload(policy.max_node_regression, "scan") == 0.1
    assert policy.for_workload(policy.max_node_regression, "chain") == 0.2
    assert policy.max_critical_path_regression == 0.03


def test_branches_follow_the_fork_and_join() -> None:
    p = synthetic_class().profile
    row = branches(p)
    assert row[0] == row[1] == row[3] == row[4] == row[5]  # the critical branch stays on row 0
    assert row[2] != row[0]


def test_the_html_timeline_is_inline_svg_with_the_critical_path_marked() -> None:
    c = synthetic_class()
    svg = timeline_svg(c)
    assert svg.startswith("<svg ") and svg.endswith("</svg>")
    assert svg.count("<rect") == 5  # one bar per timed node
    assert svg.count("class='critical'") == 4  # 0, 1, 3, 5 (4 is untimed, not drawn)
    assert "branch 1" in svg and "branch 2" not in svg
    page = profile_html(synthetic_result(c))
    assert "<svg" in page and "<script" not in page
    assert not re.search(r"(src|href)=['\"]?https?:", page)  # no external resource


def test_the_report_page_holds_the_profile_and_its_timeline() -> None:
    put("r/profile-scan.json", profile_certificate())
    result = run("report", "r", "-o", "r.html")
    assert result.exit_code == 0, result.output
    page = Path("r.html").read_text()
    assert "<h3>Profile</h3>" in page and "class='timeline'" in page
    assert page.count("class='critical'") == 4


def test_show_refuses_a_profile_whose_derived_figures_were_edited() -> None:
    from graphcert.cert.document import make_certificate

    cert = profile_certificate()
    cert["results"]["classes"][0]["profile"]["critical_path_ns"] = 1.0  # synthetic edit
    put("bad.json", make_certificate("profile", workload=cert["workload"],
                                     environment=cert["environment"],
                                     results=cert["results"], verdict=cert["verdict"]))
    result = run("show", "bad.json")
    assert result.exit_code == 2
    assert "critical_path_ns is 1 but the longest path by node medians is 6500" in \
        result.stderr


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 4), st.floats(0.5, 3.0), st.floats(0.01, 0.3))
def test_a_node_is_slower_exactly_when_it_grew_past_the_limit(node: int, factor: float,
                                                             limit: float) -> None:
    """Synthetic nodes with narrow intervals (jitter 1 ns): one node scaled by `factor`
    is slower beyond the limit, faster below it, the same within; the others stay same."""
    index = [0, 1, 2, 3, 5][node]  # the timed nodes (4 is empty)
    scale = [1.0] * 6
    scale[index] = factor
    base = synthetic_result(synthetic_class(jitter=1))
    cur = synthetic_result(synthetic_class(jitter=1, scale=scale))
    comps, notes = compare_profiles(base, cur, node_limit=limit, path_limit=limit)
    assert not notes
    moved = next(c for c in comps if c.index == index)
    if moved.diff > limit:
        assert moved.change.value == "slower"
    elif moved.diff < -limit:
        assert moved.change.value == "faster"
    else:
        assert moved.change.value == "same"
    assert all(c.change.value == "same" for c in comps
               if c.index is not None and c.index != index)


# a real PyTorch kernel's name as CUPTI reports it (mangled), on a synthetic node
MANGLED = ("_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_15CUDAFunctor_addIN3c104Half"
           "EEESt5arrayIPcLm3EEEEviT0_T1_")


def test_views_demangle_kernel_names_and_the_certificate_keeps_them_mangled() -> None:
    import dataclasses

    from graphcert.kinds.profile.views import node_rows

    c = synthetic_class()
    nodes = tuple(dataclasses.replace(n, name=MANGLED) if n.index == 1 else n
                  for n in c.profile.nodes)
    c = dataclasses.replace(c, profile=dataclasses.replace(c.profile, nodes=nodes))
    names = {row[0]: row[2] for row in node_rows(c)}
    assert names["1"] == "at::native::vectorized_elementwise_kernel<…CUDAFunctor_add…>"
    assert names["0"] == "k_0"  # not mangled: as it is
    page = profile_html(synthetic_result(c))
    assert "void at::native::vectorized_elementwise_kernel&lt;8, at::native::" \
           "CUDAFunctor_add&lt;c10::Half&gt;" in page and MANGLED not in page
    assert c.to_json()["profile"]["nodes"][1]["name"] == MANGLED


@pytest.mark.parametrize(("base_flush", "now_flush", "said"), [
    (True, False, "held with L2 cleared, this profile's held with L2 warm"),
    (None, True, "timed back to back (a certificate from before held replays)"),
])
def test_profiles_timed_with_l2_in_other_states_are_not_comparable(
        base_flush: bool | None, now_flush: bool | None, said: str) -> None:
    """Clearing L2 costs each node of a replay 155-200 ns: a baseline timed with L2 in another
    state (or back to back, before held replays) is refused, not compared."""
    import dataclasses

    put("base/profile-scan.json", profile_certificate(dataclasses.replace(
        synthetic_result(), flush_l2=base_flush)))
    put("reports/profile-scan.json", profile_certificate(dataclasses.replace(
        synthetic_result(), flush_l2=now_flush)))
    result = run("gate", "reports", "--baseline", "base")
    assert result.exit_code == 1, result.output
    out = " ".join(result.stdout.split())
    assert "[max_node_regression]" in out and "not comparable" in out and said in out
    assert "--flush-l2/--no-flush-l2" in out
