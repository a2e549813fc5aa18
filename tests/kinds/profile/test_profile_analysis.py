"""The profile analysis on synthetic DAGs with known answers (tests/_profiles.py; nothing
here came from a GPU): the critical path against brute force, chains, independent branches,
gaps, shares and the JSON round trip."""

from __future__ import annotations

import json
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from graphcert.model import NodeKind
from graphcert.profiling import Profile, ProfileGraph, analyse, critical_path, join, longest_path
from tests._profiles import chain_graph, dags, graph, records

K = NodeKind


def brute_force_longest(g: ProfileGraph, weight: list[float]) -> float:
    """The heaviest path by walking every path from every node (small graphs only)."""
    succs: dict[int, list[int]] = {i: [] for i in range(len(g.nodes))}
    for a, b in g.edges:
        succs[a].append(b)

    def walk(v: int) -> float:
        return weight[v] + max((walk(w) for w in succs[v]), default=0.0)

    return max(walk(v) for v in range(len(g.nodes)))


def node_medians(g: ProfileGraph, durations: list[list[int]]) -> list[float]:
    return [float(np.median([d[i] for d in durations])) if node.timed else 0.0
            for i, node in enumerate(g.nodes)]


@settings(max_examples=200, deadline=None)
@given(dags())
def test_critical_path_is_the_brute_force_longest_path(case: tuple[ProfileGraph, list[list[int]]]
                                                       ) -> None:
    g, durations = case
    weight = node_medians(g, durations)
    profile = analyse(join(records(g, durations), g))
    assert profile.critical_path_ns == brute_force_longest(g, weight)
    assert critical_path(g, weight) == (profile.critical_path, profile.critical_path_ns)
    path = profile.critical_path
    assert all(edge in set(g.edges) for edge in zip(path, path[1:], strict=False))
    assert sum(weight[i] for i in path) == profile.critical_path_ns
    assert [n.median_ns for n in profile.nodes] == [weight[i] for i in g.timed]


@settings(max_examples=100, deadline=None)
@given(dags())
def test_with_fixed_durations_and_no_gaps_the_span_is_the_critical_path(
        case: tuple[ProfileGraph, list[list[int]]]) -> None:
    g, durations = case
    same = [durations[0]] * 3  # every replay alike: each node starts when its inputs end
    profile = analyse(join(records(g, same), g))
    assert profile.span_ns == profile.critical_path_ns
    assert profile.parallelism >= 1.0 - 1e-12
    assert abs(sum(n.share for n in profile.nodes) - 1.0) < 1e-9
    # a node starts when its last input ends: its smallest gap is 0, none is negative
    smallest: dict[int, float] = {}
    for gap in profile.gaps:
        smallest[gap.to_index] = min(gap.median_ns, smallest.get(gap.to_index, gap.median_ns))
    assert all(v == 0 for v in smallest.values())
    assert all(gap.median_ns >= 0 for gap in profile.gaps)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 12), st.integers(0, 500), st.lists(st.integers(1, 900), min_size=12,
                                                         max_size=12))
def test_a_chain_is_all_critical_path_with_its_gaps(n: int, gap: int, d: list[int]) -> None:
    g = chain_graph(n)
    profile = analyse(join(records(g, [d[:n]] * 4, gap=gap), g))
    assert profile.critical_path == tuple(range(n))
    assert profile.critical_path_ns == sum(d[:n])
    assert [(x.from_index, x.to_index, x.median_ns) for x in profile.gaps] == \
        [(i, i + 1, gap) for i in range(n - 1)]
    assert profile.span_ns == sum(d[:n]) + gap * (n - 1)
    if gap == 0:
        assert profile.parallelism == 1.0
    assert [x.start_offset_ns for x in profile.nodes] == \
        [sum(d[:i]) + gap * i for i in range(n)]


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 8), st.integers(1, 1000))
def test_independent_branches_run_in_parallel(k: int, d: int) -> None:
    g = graph([K.KERNEL] * k, [])  # k branches of one node each, no edges
    profile = analyse(join(records(g, [[d] * k] * 3), g))
    assert profile.parallelism == k
    assert profile.span_ns == d and profile.critical_path_ns == d
    assert len(profile.critical_path) == 1 and profile.gaps == ()


def test_a_fork_of_two_branches_overlaps_and_the_longer_branch_is_critical() -> None:
    # 0 -> {1 -> 2, 3} -> 4: branch 1-2 takes 300 ns, branch 3 takes 100 ns
    g = graph([K.KERNEL] * 5, [(0, 1), (1, 2), (0, 3), (2, 4), (3, 4)])
    profile = analyse(join(records(g, [[10, 100, 200, 100, 10]] * 5, gap=5), g))
    assert profile.critical_path == (0, 1, 2, 4)
    assert profile.critical_path_ns == 320
    assert profile.span_ns == 320 + 3 * 5
    assert profile.parallelism == 420 / 335 > 1
    gaps = {(x.from_index, x.to_index): x.median_ns for x in profile.gaps}
    assert gaps == {(0, 1): 5, (0, 3): 5, (1, 2): 5, (2, 4): 5, (3, 4): 325 - 115}


def test_a_gap_through_an_untimed_node_is_marked() -> None:
    g = graph([K.KERNEL, K.EMPTY, K.KERNEL], [(0, 1), (1, 2)])
    profile = analyse(join(records(g, [[40, 0, 60]] * 2), g))
    (gap,) = profile.gaps
    assert (gap.from_index, gap.to_index, gap.through_untimed) == (0, 2, True)
    assert profile.critical_path == (0, 1, 2) and profile.critical_path_ns == 100
    assert [(u.index, u.kind) for u in profile.untimed] == [(1, K.EMPTY)]


def test_medians_min_max_and_shares_over_replays() -> None:
    g = graph([K.KERNEL, K.MEMSET], [(1, 0)])
    profile = analyse(join(records(g, [[30, 10], [50, 10], [10, 30]]), g))
    kernel, memset = profile.nodes
    assert (kernel.median_ns, kernel.min_ns, kernel.max_ns) == (30, 10, 50)
    assert (memset.median_ns, memset.min_ns, memset.max_ns) == (10, 10, 30)
    assert (kernel.share, memset.share) == (0.75, 0.25)
    assert kernel.start_offset_ns == 10 and memset.start_offset_ns == 0
    assert profile.replays == 3 and profile.sum_ns == 40


@settings(max_examples=30, deadline=None)
@given(dags(), st.randoms(use_true_random=False))
def test_record_order_does_not_matter_and_json_round_trips(
        case: tuple[ProfileGraph, list[list[int]]], rnd: random.Random) -> None:
    g, durations = case
    recs = records(g, durations, gap=3)
    profile = analyse(join(recs, g))
    rnd.shuffle(recs)
    assert analyse(join(recs, g)) == profile
    text = json.dumps(profile.to_json())
    assert Profile.from_json(json.loads(text)) == profile


@settings(max_examples=100, deadline=None)
@given(dags(), st.integers(0, 500))
def test_the_last_predecessor_to_end_starts_its_dependent_after_the_gap(
        case: tuple[ProfileGraph, list[list[int]]], gap: int) -> None:
    """Synthetic schedules start a node `gap` after its last timed predecessor ends: on
    direct edges between timed nodes, each dependent's smallest gap is the gap, and no gap
    on a direct edge is smaller. One replay: over several, the last predecessor to end may
    change from replay to replay, and a median of gaps is then no single replay's."""
    g, durations = case
    profile = analyse(join(records(g, durations[:1], gap=gap), g))
    preds = g.predecessors()
    direct: dict[int, list[float]] = {}
    for e in profile.gaps:
        if not e.through_untimed:
            direct.setdefault(e.to_index, []).append(e.median_ns)
            assert e.median_ns >= gap
    for v, found in direct.items():
        if all(g.nodes[p].timed for p in preds[v]):  # no untimed way in
            assert min(found) == gap


@settings(max_examples=100, deadline=None)
@given(dags())
def test_each_node_median_lies_in_its_interval_and_the_longest_path_agrees(
        case: tuple[ProfileGraph, list[list[int]]]) -> None:
    g, durations = case
    profile = analyse(join(records(g, durations), g))
    for node in profile.nodes:
        assert node.min_ns <= node.low_ns <= node.median_ns <= node.high_ns <= node.max_ns
    assert profile.edges == tuple(sorted(set(g.edges)))
    weight = node_medians(g, durations)
    assert longest_path(len(g.nodes), profile.edges, weight) == \
        (profile.critical_path, profile.critical_path_ns)
