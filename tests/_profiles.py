"""Synthetic profiles (nothing here came from a GPU): graphs of kernels k_*, and activity
records scheduled as soon as their predecessors end (plus a fixed gap), one launch per
replay, so the tests know the answers."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from graphcert.model import NodeKind
from graphcert.profiling import ActivityRecord, GraphNode, ProfileGraph

INSTANCE = 7  # the synthetic graph instance (high 32 bits of graph_node_id)
REPLAY_STRIDE_NS = 10_000_000  # replays far apart, so they never overlap


def node_id(index: int) -> int:
    """A synthetic node id, unlike the index, so a join by index would fail."""
    return 1000 + 3 * index


def graph(kinds: Sequence[NodeKind], edges: Sequence[tuple[int, int]]) -> ProfileGraph:
    nodes = tuple(GraphNode(i, node_id(i), k, f"k_{i}" if k is NodeKind.KERNEL else None)
                  for i, k in enumerate(kinds))
    return ProfileGraph(nodes, tuple(edges))


def chain_graph(n: int) -> ProfileGraph:
    return graph([NodeKind.KERNEL] * n, [(i, i + 1) for i in range(n - 1)])


def schedule(g: ProfileGraph, durations: Sequence[int], gap: int = 0,
             t0: int = 0) -> dict[int, tuple[int, int]]:
    """Each node's (start, end): it starts `gap` after its last predecessor ends (t0 for a
    source); an untimed node takes no time and adds no gap."""
    preds = g.predecessors()
    times: dict[int, tuple[int, int]] = {}
    for v in g.topological():
        timed = g.nodes[v].timed
        ready = max((times[p][1] + (gap if timed and g.nodes[p].timed else 0)
                     for p in preds[v]), default=t0)
        times[v] = (ready, ready + (durations[v] if timed else 0))
    return times


def records(g: ProfileGraph, per_replay: Sequence[Sequence[int]],
            gap: int = 0) -> list[ActivityRecord]:
    """One record per timed node per replay; per_replay[r][i] is node i's duration in
    replay r (launch 100 + r)."""
    out = []
    for r, durations in enumerate(per_replay):
        for v, (start, end) in sorted(schedule(g, durations, gap, r * REPLAY_STRIDE_NS).items()):
            node = g.nodes[v]
            if node.timed:
                out.append(ActivityRecord((INSTANCE << 32) | node.node_id, start, end, node.kind,
                                      node.name or node.kind.value, 100 + r))
    return out


@st.composite
def dags(draw: st.DrawFn, max_nodes: int = 7) -> tuple[ProfileGraph, list[list[int]]]:
    """A random DAG (edges from a random order), some nodes untimed, at least one timed, and
    each node's duration in 1 to 3 replays."""
    n = draw(st.integers(1, max_nodes))
    k = NodeKind
    kinds = draw(st.lists(st.sampled_from([k.KERNEL, k.KERNEL, k.MEMSET, k.MEMCPY, k.EMPTY,
                                           k.HOST]), min_size=n, max_size=n))
    if not any(x in (k.KERNEL, k.MEMSET, k.MEMCPY) for x in kinds):
        kinds[draw(st.integers(0, n - 1))] = k.KERNEL
    order = draw(st.permutations(range(n)))  # edges go forward in this order, not by index
    edges = [(order[i], order[j]) for i in range(n) for j in range(i + 1, n)
             if draw(st.booleans())]
    replays = draw(st.integers(1, 3))
    durations = [[draw(st.integers(1, 1000)) for _ in range(n)] for _ in range(replays)]
    return graph(kinds, edges), durations
