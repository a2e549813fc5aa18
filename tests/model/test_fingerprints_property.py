"""Fingerprints are canonical for every graph: property tests over random DAGs and the
symmetric families real captures produce (reduction trees, butterflies, crowns, regular
bipartite DAGs, disjoint copies, complete bipartite layers, nested bodies).

All graphs are synthetic (kernel names k_*), built in code; nothing imitates a GPU.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from _graphs import butterfly_edges, reduction_tree_edges
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphcert.model import (
    EdgeData,
    GraphSnapshot,
    NodeKind,
    RawGraph,
    RawNode,
    diff_snapshots,
    snapshot_from_json,
    snapshot_from_raw,
    snapshot_to_json,
)

K = NodeKind
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def kern(i: int, name: str = "k_a", grid: int = 1) -> RawNode:
    return RawNode(i, K.KERNEL, {"name": name, "grid": [grid, 1, 1], "block": [256, 1, 1],
                                 "shared_mem_bytes": 0, "param_sizes": [8, 4]})


def graph(n: int, edges: list[tuple[int, int]], name: str = "k_a") -> RawGraph:
    return RawGraph(tuple(kern(i, name) for i in range(n)), tuple(edges))


# ---------------------------------------------------------------- families


def reduction_tree(leaves: int) -> RawGraph:
    """A binary reduction: each node combines two nodes of the level before."""
    return graph(*reduction_tree_edges(leaves))


def butterfly(width: int, stages: int) -> RawGraph:
    """All-reduce butterfly: node (s, i) after (s-1, i) and (s-1, i xor 2^(s-1))."""
    return graph(*butterfly_edges(width, stages))


def crown(n: int) -> RawGraph:
    """K_{n,n} minus a perfect matching, top to bottom."""
    return graph(2 * n, [(i, n + j) for i in range(n) for j in range(n) if i != j])


def regular_bipartite(n: int, k: int, seed: int) -> RawGraph:
    """A random k-regular bipartite DAG (k disjoint perfect matchings, top to bottom)."""
    rng = random.Random(seed)
    edges: set[tuple[int, int]] = set()
    shifts = rng.sample(range(n), k)
    perm = list(range(n))
    rng.shuffle(perm)
    for s in shifts:
        edges |= {(i, n + perm[(i + s) % n]) for i in range(n)}
    return graph(2 * n, sorted(edges))


def copies(raw: RawGraph, times: int) -> RawGraph:
    """`times` disjoint copies of one graph."""
    n = len(raw.nodes)
    nodes = tuple(RawNode(c * n + node.id, node.kind, dict(node.attrs), node.children)
                  for c in range(times) for node in raw.nodes)
    edges = tuple((c * n + e[0], c * n + e[1], *e[2:]) for c in range(times)
                  for e in raw.edges)
    return RawGraph(nodes, edges)  # type: ignore[arg-type]


def bipartite_layers(sizes: list[int]) -> RawGraph:
    """Complete bipartite connections between consecutive layers."""
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    edges = [(starts[i] + a, starts[i + 1] + b) for i in range(len(sizes) - 1)
             for a in range(sizes[i]) for b in range(sizes[i + 1])]
    return graph(sum(sizes), edges)


def nested(inner: RawGraph) -> RawGraph:
    """Two WHILE conditionals whose body holds a child graph of `inner`, in parallel after
    one kernel: symmetric at every level."""
    body = RawGraph((RawNode(0, K.GRAPH, {}, (inner,)), kern(1, "k_body")), ((0, 1),))
    cond = [RawNode(i, K.CONDITIONAL, {"type": "while", "size": 1}, (body,)) for i in (1, 2)]
    return RawGraph((kern(0, "k_start"), *cond, kern(3, "k_end")),
                    ((0, 1), (0, 2), (1, 3), (2, 3)))


FAMILIES = {
    "tree-32": reduction_tree(32),
    "butterfly-8x3": butterfly(8, 3),
    "crown-6": crown(6),
    "regular-3-bipartite-20": regular_bipartite(20, 3, seed=7),
    "copies-4-of-tree-8": copies(reduction_tree(8), 4),
    "bipartite-layers-3-4-3-2": bipartite_layers([3, 4, 3, 2]),
    "nested-bodies": nested(crown(3)),
}


# ---------------------------------------------------------------- relabelling


def shuffle_graph(raw: RawGraph, rng: random.Random) -> RawGraph:
    """The same graph, nodes renamed and listed in another order, edges too; recursively."""
    ids = rng.sample(range(-10**6, 10**6), len(raw.nodes))
    new_id = {node.id: ids[i] for i, node in enumerate(raw.nodes)}
    nodes = [RawNode(new_id[node.id], node.kind, dict(node.attrs),
                     tuple(shuffle_graph(c, rng) for c in node.children)) for node in raw.nodes]
    edges = [(new_id[e[0]], new_id[e[1]], *e[2:]) for e in raw.edges]
    rng.shuffle(nodes)
    rng.shuffle(edges)
    return RawGraph(tuple(nodes), tuple(edges))  # type: ignore[arg-type]


def round_trip(s: GraphSnapshot) -> GraphSnapshot:
    return snapshot_from_json(json.loads(json.dumps(snapshot_to_json(s))))


@pytest.mark.parametrize("name", sorted(FAMILIES))
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_symmetric_families_are_canonical(name: str, seed: int) -> None:
    raw = FAMILIES[name]
    a = snapshot_from_raw(raw)
    b = snapshot_from_raw(shuffle_graph(raw, random.Random(seed)))
    assert a == b  # hashes, order, deps, attrs, children: all of it
    assert round_trip(b) == b


@st.composite
def random_dags(draw: st.DrawFn) -> RawGraph:
    """Small DAGs with few distinct labels (look-alikes abound) and some edge data."""
    n = draw(st.integers(1, 14))
    nodes = [kern(i, draw(st.sampled_from(["k_a", "k_b"])), draw(st.sampled_from([1, 2])))
             if draw(st.booleans()) else RawNode(i, K.EMPTY, {}) for i in range(n)]
    pairs = [(a, b) for b in range(n) for a in range(b)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=2 * n)) if pairs else []
    edges: list[Any] = [(a, b, EdgeData(1, 1, 0)) if draw(st.integers(0, 5)) == 0 else (a, b)
                        for a, b in chosen]
    return RawGraph(tuple(nodes), tuple(edges))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=random_dags(), seed=st.integers(0, 2**32 - 1))
def test_random_dags_are_canonical(raw: RawGraph, seed: int) -> None:
    a = snapshot_from_raw(raw)
    b = snapshot_from_raw(shuffle_graph(raw, random.Random(seed)))
    assert a == b
    assert all(d < n.index for n in a.nodes for d in n.deps)  # a topological order
    assert round_trip(a) == a


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=random_dags(), data=st.data())
def test_shape_never_reorders_topology(raw: RawGraph, data: st.DataObject) -> None:
    """New grids keep the topology fingerprint and every node's place: position i of one
    snapshot is position i of the other (what diffs rely on)."""
    def regrid(node: RawNode) -> RawNode:
        if node.kind is not K.KERNEL:
            return node
        return kern(node.id, node.attrs["name"], data.draw(st.integers(1, 3)))

    a = snapshot_from_raw(raw)
    b = snapshot_from_raw(RawGraph(tuple(regrid(n) for n in raw.nodes), raw.edges))
    assert a.topology_hash == b.topology_hash
    assert [(n.kind, n.name, n.deps) for n in a.nodes] == [(n.kind, n.name, n.deps)
                                                             for n in b.nodes]
    assert a.edge_data == b.edge_data
    d = diff_snapshots(a, b)
    assert not d.added and not d.removed
    assert {c.field for c in d.changed} <= {"grid"}
    assert (a.shape_hash == b.shape_hash) == (not d.changed)


# ---------------------------------------------------------------- what changes what


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_one_change_moves_the_right_hash(name: str) -> None:
    raw = FAMILIES[name]
    base = snapshot_from_raw(raw)
    first_kernel = next(i for i, n in enumerate(raw.nodes) if n.kind is K.KERNEL)

    def replace(i: int, node: RawNode) -> RawGraph:
        return RawGraph(raw.nodes[:i] + (node,) + raw.nodes[i + 1:], raw.edges)

    old = raw.nodes[first_kernel]
    renamed = snapshot_from_raw(replace(first_kernel, kern(old.id, "k_renamed", 1)))
    assert renamed.topology_hash != base.topology_hash
    regrid = snapshot_from_raw(replace(first_kernel, kern(old.id, old.attrs["name"], 9)))
    assert regrid.topology_hash == base.topology_hash != regrid.shape_hash != base.shape_hash
    dropped = snapshot_from_raw(RawGraph(raw.nodes, raw.edges[1:]))
    assert dropped.topology_hash != base.topology_hash
    e = raw.edges[0]
    programmatic = snapshot_from_raw(RawGraph(raw.nodes, ((e[0], e[1], EdgeData(1, 1, 0)),
                                                          *raw.edges[1:])))
    assert programmatic.topology_hash != base.topology_hash
    assert programmatic.edge_data and round_trip(programmatic) == programmatic


def test_edge_data_tells_edges_apart_and_diffs_name_it() -> None:
    plain = snapshot_from_raw(graph(2, [(0, 1)]))
    prog = snapshot_from_raw(RawGraph(graph(2, []).nodes, ((0, 1, EdgeData(1, 1, 0)),)))
    launch_order = snapshot_from_raw(RawGraph(graph(2, []).nodes, ((0, 1, EdgeData(1, 2, 0)),)))
    assert len({plain.topology_hash, prog.topology_hash, launch_order.topology_hash}) == 3
    assert prog.edges == plain.edges and prog.edge_data == ((0, 1, EdgeData(1, 1, 0)),)
    assert EdgeData(0, 0, 0).is_default
    (change,) = diff_snapshots(plain, prog).changed
    assert change.field == "edge_data" and change.value_b == {
        "0": {"type": 1, "from_port": 1, "to_port": 0}}


def test_nested_body_changes_reach_the_top() -> None:
    base = snapshot_from_raw(nested(crown(3)))
    deeper = snapshot_from_raw(nested(bipartite_layers([3, 3])))
    assert deeper.topology_hash != base.topology_hash
    regrid = crown(3)
    regrid = RawGraph((kern(0, "k_a", 5), *regrid.nodes[1:]), regrid.edges)
    shaped = snapshot_from_raw(nested(regrid))
    assert shaped.topology_hash == base.topology_hash != shaped.shape_hash != base.shape_hash


# Pinned values: a change here means every recorded hash changes (a new igraph/BLISS that
# labels differently, or a change to what is hashed): bump FINGERPRINT_SCHEME and re-record.
PINNED = {
    "tree-32": ("aa2fcd8b39652fd5", "725a7f0e64c2b6f4"),
    "butterfly-8x3": ("1f840ac3f4536c09", "1d606232be10da84"),
    "nested-bodies": ("f44a316339a4e371", "b9b5071e33e7002b"),
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_fingerprints_are_pinned(name: str) -> None:
    s = snapshot_from_raw(FAMILIES[name])
    assert (s.topology_hash[:16], s.shape_hash[:16]) == PINNED[name]


def _doc_hash(s: GraphSnapshot, level: str) -> str:
    """docs/fingerprints.md sections 1, 2, 3 and 5, written again from the text alone."""
    import hashlib

    from graphcert.model import KINDS

    def canon(value: Any) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)

    nodes = []
    for node in s.nodes:
        spec = KINDS[node.kind]
        keys = spec.topology if level == "topology" else spec.topology + spec.shape
        nodes.append({"attrs": {k: node.attrs[k] for k in keys
                                if node.attrs.get(k) is not None},
                      "children": [_doc_hash(c, level) for c in node.children],
                      "kind": node.kind.value})
    data = {(a, b): d.to_json() for a, b, d in s.edge_data}
    edges = [[a, b, data[(a, b)]] if (a, b) in data else [a, b] for a, b in s.edges]
    text = canon({"edges": edges, "nodes": nodes, "scheme": 2})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_docs_reproduce_the_hashes(name: str) -> None:
    raw = FAMILIES[name]
    e = raw.edges[0]
    s = snapshot_from_raw(RawGraph(raw.nodes, ((e[0], e[1], EdgeData(1, 2, 0)),
                                               *raw.edges[1:])))
    assert _doc_hash(s, "topology") == s.topology_hash
    assert _doc_hash(s, "shape") == s.shape_hash
