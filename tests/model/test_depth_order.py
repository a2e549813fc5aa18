"""The order without labels (depth_order): where every node has a depth of its own, the
snapshot is the one BLISS's labels give, and elsewhere it steps aside. Synthetic graphs built
in code (kernel names k_*); nothing imitates a GPU."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphcert.model import EdgeData, NodeKind, RawGraph, RawNode, snapshot_from_raw
from graphcert.model import snapshot as snapshot_mod
from graphcert.model.canonical import DEPTH_ORDER_MAX_NODES, depth_order

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def test_a_chain_with_skip_edges_is_ordered_by_depth() -> None:
    # 2 -> 0 -> 3 -> 1, plus 2 -> 3 and 2 -> 1 (forward skips keep every depth distinct)
    assert depth_order(4, [(2, 0), (0, 3), (3, 1), (2, 3), (2, 1)]) == [2, 0, 3, 1]
    assert depth_order(1, []) == [0]


@pytest.mark.parametrize("n, edges", [
    (2, []),                                  # two sources at depth 0
    (4, [(0, 1), (0, 2), (1, 3), (2, 3)]),    # a diamond: 1 and 2 share depth 1
    (3, [(0, 1), (1, 2), (2, 1)]),            # a cycle: the labelled path reports it
    (0, []),
    (DEPTH_ORDER_MAX_NODES + 1, [(i, i + 1) for i in range(DEPTH_ORDER_MAX_NODES)]),
])
def test_anything_but_a_small_chain_is_left_to_the_labels(n: int,
                                                          edges: list[tuple[int, int]]) -> None:
    assert depth_order(n, edges) is None


@st.composite
def chains(draw: st.DrawFn) -> RawGraph:
    """A chain of 1..12 nodes in a shuffled id order, with random forward skip edges, some
    edges carrying data, and look-alike or distinct kernels."""
    n = draw(st.integers(1, 12))
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    ids = rng.sample(range(1000), n)  # chain position -> raw id
    names = [f"k_{rng.choice('abc')}" for _ in range(n)]
    nodes = tuple(RawNode(ids[p], NodeKind.KERNEL,
                          {"name": names[p], "grid": [rng.choice((1, 2)), 1, 1],
                           "block": [256, 1, 1], "param_sizes": [8]})
                  for p in rng.sample(range(n), n))
    pairs = [(p, p + 1) for p in range(n - 1)]
    pairs += [(a, b) for a in range(n) for b in range(a + 2, n) if rng.random() < 0.2]
    edges: list[tuple[int, int] | tuple[int, int, EdgeData]] = [
        (ids[a], ids[b], EdgeData(1, 1, 0)) if rng.random() < 0.2 else (ids[a], ids[b])
        for a, b in pairs]
    rng.shuffle(edges)
    return RawGraph(nodes, tuple(edges))


@SETTINGS
@given(chains())
def test_a_chains_snapshot_is_the_labelled_one(raw: RawGraph) -> None:
    fast = snapshot_from_raw(raw)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(snapshot_mod, "depth_order", lambda n, edges: None)
        labelled = snapshot_from_raw(raw)
    assert fast == labelled  # nodes, edges, edge data and both fingerprints


def test_the_nodes_on_or_behind_a_cycle_are_named() -> None:
    from graphcert.model.canonical import find_cycle_nodes

    # 0 -> 1 <-> 2 -> 3, 4 alone: 1 and 2 are on the cycle, 3 behind it
    succs = [[1], [2], [1, 3], [], []]
    assert find_cycle_nodes(5, succs) == [1, 2, 3]
    assert find_cycle_nodes(3, [[1], [2], []]) == []
    assert find_cycle_nodes(1, [[0]]) == [0]
