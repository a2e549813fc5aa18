"""The pure graph model: kinds, canonical order, fingerprints (JSON files and diffs:
test_model_files.py).

All graphs here are synthetic (kernel names k_*), built in code; nothing imitates a real GPU.
"""

from __future__ import annotations

import enum
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _modelgraphs import chain, fork, kern, memset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphcert.errors import GraphcertError
from graphcert.model import (
    SHAPE_ATTRS,
    TOPOLOGY_ATTRS,
    VALUE_ATTRS,
    GraphSnapshot,
    NodeKind,
    RawGraph,
    RawNode,
    attr_class,
    diff_snapshots,
    snapshot_from_json,
    snapshot_from_raw,
    snapshot_to_json,
)

K = NodeKind


def relabel(raw: RawGraph, order: list[int], id_of: list[int], edge_order: list[int]
            ) -> RawGraph:
    """The same graph with new ids, nodes listed in `order`, edges in `edge_order`."""
    ids = {n.id: id_of[i] for i, n in enumerate(raw.nodes)}
    nodes = [RawNode(ids[n.id], n.kind, dict(n.attrs), n.children) for n in raw.nodes]
    edges = [(ids[e[0]], ids[e[1]]) for e in raw.edges]  # plain pairs here: no edge data
    return RawGraph(tuple(nodes[i] for i in order), tuple(edges[i] for i in edge_order))


def is_topological(s: GraphSnapshot) -> bool:
    return all(d < n.index for n in s.nodes for d in n.deps) and all(a < b for a, b in s.edges)


# ---------------------------------------------------------------- kinds


def test_driver_type_numbers_map_in_cuda_order() -> None:
    expected = ["kernel", "memcpy", "memset", "host", "graph", "empty", "event_wait",
                "event_record", "ext_semas_signal", "ext_semas_wait", "mem_alloc", "mem_free",
                "batch_mem_op", "conditional"]
    assert [NodeKind.from_driver_type(t).value for t in range(14)] == expected
    for t in (14, 99, -1):
        assert NodeKind.from_driver_type(t) is NodeKind.UNKNOWN

    class DriverType(enum.IntEnum):  # what cuda.bindings hands out
        CU_GRAPH_NODE_TYPE_MEMSET = 2

    assert NodeKind.from_driver_type(DriverType.CU_GRAPH_NODE_TYPE_MEMSET) is NodeKind.MEMSET
    assert len(NodeKind) == 15
    assert NodeKind("event_wait") is NodeKind.EVENT_WAIT


def test_attr_classes() -> None:
    assert attr_class(K.KERNEL, "name") == "topology"
    assert attr_class(K.KERNEL, "grid") == "shape"
    assert attr_class(K.MEMCPY, "direction") == "topology"
    assert attr_class(K.MEMSET, "bytes") == "shape"
    assert attr_class(K.MEMSET, "value") == "value"
    assert attr_class(K.CONDITIONAL, "type") == "topology"
    assert attr_class(K.CONDITIONAL, "size") == "shape"
    assert attr_class(K.KERNEL, "some_new_key") == "value"
    for kind in NodeKind:
        t, s = TOPOLOGY_ATTRS.get(kind, frozenset()), SHAPE_ATTRS.get(kind, frozenset())
        assert not (t & s) and not (t & VALUE_ATTRS.get(kind, frozenset()))


# ---------------------------------------------------------------- canonical order


@st.composite
def random_dags(draw: st.DrawFn) -> RawGraph:
    """Small DAGs with few distinct labels, so look-alike nodes (the hard case) abound."""
    n = draw(st.integers(1, 12))
    nodes = []
    for i in range(n):
        kind = draw(st.sampled_from(["kernel", "kernel", "kernel", "memset", "empty"]))
        if kind == "kernel":
            nodes.append(kern(i, draw(st.sampled_from(["k_a", "k_b"])),
                              draw(st.sampled_from([1, 2]))))
        elif kind == "memset":
            nodes.append(memset(i, value=draw(st.sampled_from([0, 1]))))
        else:
            nodes.append(RawNode(i, K.EMPTY, {}))
    pairs = [(a, b) for b in range(n) for a in range(b)]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=2 * n)) if pairs else []
    return RawGraph(tuple(nodes), tuple(edges))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=random_dags(), data=st.data())
def test_canonical_form_ignores_node_order_and_ids(raw: RawGraph, data: st.DataObject) -> None:
    n = len(raw.nodes)
    order = data.draw(st.permutations(range(n)))
    id_of = data.draw(st.lists(st.integers(-10**6, 10**6), min_size=n, max_size=n,
                               unique=True))
    edge_order = data.draw(st.permutations(range(len(raw.edges))))
    a = snapshot_from_raw(raw)
    b = snapshot_from_raw(relabel(raw, list(order), id_of, list(edge_order)))
    assert a == b  # hashes, canonical indices, deps, attrs: all of it
    assert is_topological(a)


@settings(max_examples=150, deadline=None)
@given(raw=random_dags(), data=st.data())
def test_topology_hash_ignores_shape_and_values(raw: RawGraph, data: st.DataObject) -> None:
    """New grids and memset values never move the topology fingerprint, even when they
    reorder look-alike nodes; values never move the shape fingerprint."""
    def vary(node: RawNode, grids: bool) -> RawNode:
        attrs = dict(node.attrs)
        if grids and "grid" in attrs:
            attrs["grid"] = [data.draw(st.integers(1, 4)), 1, 1]
        if "value" in attrs:
            attrs["value"] = data.draw(st.integers(0, 3))
        return RawNode(node.id, node.kind, attrs)

    base = snapshot_from_raw(raw)
    regrid = snapshot_from_raw(RawGraph(tuple(vary(n, True) for n in raw.nodes), raw.edges))
    revalue = snapshot_from_raw(RawGraph(tuple(vary(n, False) for n in raw.nodes), raw.edges))
    assert regrid.topology_hash == base.topology_hash
    assert (revalue.topology_hash, revalue.shape_hash) == (base.topology_hash, base.shape_hash)


def parallel_chains(width: int, length: int, reps: int = 1, grids: bool = False) -> RawGraph:
    """`reps` fork-joins in a row, each with `width` parallel chains of `length` kernels
    (grids differ per chain when asked): look-alikes that are not twins, the costly case."""
    nodes, edges, prev = [RawNode(0, K.EMPTY, {})], [], 0
    for _ in range(reps):
        tails = []
        for w in range(width):
            last = prev
            for step in range(length):
                nid = len(nodes)
                nodes.append(kern(nid, f"k_{step}", grid=w + 1 if grids else 1))
                edges.append((last, nid))
                last = nid
            tails.append(last)
        join = len(nodes)
        nodes.append(RawNode(join, K.EMPTY, {}))
        edges += [(t, join) for t in tails]
        prev = join
    return RawGraph(tuple(nodes), tuple(edges))


@pytest.mark.parametrize("raw", [
    parallel_chains(8, 3),
    parallel_chains(8, 3, grids=True),
    parallel_chains(3, 2, reps=200),  # 1,400 nodes: searched segment by segment
], ids=["8-chains", "8-chains-distinct-grids", "200-fork-joins"])
def test_structured_graphs_are_canonical(raw: RawGraph) -> None:
    n = len(raw.nodes)
    a = snapshot_from_raw(raw)
    b = snapshot_from_raw(relabel(raw, list(reversed(range(n))), [7 * i + 3 for i in range(n)],
                                  list(reversed(range(len(raw.edges))))))
    assert a == b


def test_child_graphs_are_canonical_too() -> None:
    raw = fork()
    shuffled = relabel(raw, [6, 5, 4, 3, 2, 1, 0], [70, 60, 50, 40, 30, 20, 10],
                       [6, 5, 4, 3, 2, 1, 0])
    child = shuffled.nodes[0].children[0]
    shuffled_child = RawGraph(tuple(reversed(child.nodes)), child.edges)
    node = RawNode(shuffled.nodes[0].id, K.GRAPH, {}, (shuffled_child,))
    shuffled = RawGraph((node, *shuffled.nodes[1:]), shuffled.edges)
    assert snapshot_from_raw(raw) == snapshot_from_raw(shuffled)


def test_snapshot_structure() -> None:
    s = snapshot_from_raw(fork(), meta={"workload": "synthetic", "n": 3})
    assert [n.index for n in s.nodes] == list(range(7))
    assert [n.kind for n in s.nodes][:2] == [K.MEMSET, K.KERNEL]
    assert s.nodes[1].name == "k_a" and s.nodes[0].name is None
    assert s.node_count == 7
    assert s.counts() == {"kernel": 5, "memset": 1, "graph": 1}
    assert s.counts(recursive=True) == {"kernel": 7, "memset": 1, "graph": 1}
    assert s.meta == {"workload": "synthetic", "n": 3}
    assert len(s.topology_hash) == len(s.shape_hash) == 64
    assert is_topological(s)
    graph_node = s.nodes[-1]
    assert graph_node.kind is K.GRAPH and graph_node.children[0].node_count == 2
    assert sorted(graph_node.deps) == list(graph_node.deps)
    # Parallel look-alikes (k_x -> k_b twice) with their grids swapped are the same graph:
    # one snapshot, node for node.
    twins = snapshot_from_raw(fork(grid_b=2, grid_c=1, name_c="k_b"))
    assert twins == snapshot_from_raw(fork(grid_b=1, grid_c=2, name_c="k_b"))


def test_hashes_are_the_same_in_another_process() -> None:
    """Fingerprints must not depend on Python's per-process hash seed."""
    s = snapshot_from_raw(fork())
    code = ("import sys; sys.path[:0] = sys.argv[1:]; import test_model as t; "
            "from graphcert.model import snapshot_from_raw as f; "
            "s = f(t.fork()); print(s.topology_hash, s.shape_hash)")
    for seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        here = Path(__file__).resolve().parent  # the child imports this very module
        out = subprocess.run([sys.executable, "-c", code, str(here), str(here.parent)],
                             env=env, capture_output=True, text=True, check=True).stdout
        assert out.split() == [s.topology_hash, s.shape_hash]


# ---------------------------------------------------------------- fingerprint semantics


def hashes(raw: RawGraph) -> tuple[str, str]:
    s = snapshot_from_raw(raw)
    return s.topology_hash, s.shape_hash


def test_grid_changes_shape_not_topology() -> None:
    t0, s0 = hashes(chain(memset(0), kern(1, "k_a", 4), kern(2, "k_b")))
    t1, s1 = hashes(chain(memset(0), kern(1, "k_a", 8), kern(2, "k_b")))
    assert t0 == t1 and s0 != s1


@pytest.mark.parametrize("attr,value", [("block", [128, 1, 1]), ("shared_mem_bytes", 64),
                                        ("param_sizes", [8]), ("cooperative", True),
                                        ("cluster_dim", [2, 1, 1]), ("priority", 1)])
def test_every_launch_attribute_is_shape(attr: str, value: Any) -> None:
    t0, s0 = hashes(chain(kern(0, "k_a")))
    t1, s1 = hashes(chain(kern(0, "k_a", **{attr: value})))
    assert t0 == t1 and s0 != s1


def test_memset_bytes_are_shape_and_value_is_neither() -> None:
    base = hashes(chain(memset(0, value=0), kern(1, "k_a")))
    assert hashes(chain(memset(0, value=0xFF), kern(1, "k_a"))) == base
    t, s = hashes(chain(memset(0, width=512), kern(1, "k_a")))
    assert t == base[0] and s != base[1]


def test_kernel_name_edge_and_direction_change_topology() -> None:
    base = hashes(chain(kern(0, "k_a"), kern(1, "k_b")))
    assert hashes(chain(kern(0, "k_a"), kern(1, "k_c")))[0] != base[0]
    apart = RawGraph((kern(0, "k_a"), kern(1, "k_b")), ())
    assert hashes(apart)[0] != base[0]
    h2d = RawNode(0, K.MEMCPY, {"direction": "HtoD", "bytes": 64})
    d2h = RawNode(0, K.MEMCPY, {"direction": "DtoH", "bytes": 64})
    assert hashes(chain(h2d))[0] != hashes(chain(d2h))[0]
    assert hashes(chain(RawNode(0, K.HOST, {})))[0] != hashes(chain(RawNode(0, K.EMPTY, {})))[0]


def test_unknown_driver_types_differ_and_unknown_keys_are_values() -> None:
    u14 = RawNode(0, K.UNKNOWN, {"driver_type": 14})
    u15 = RawNode(0, K.UNKNOWN, {"driver_type": 15})
    assert hashes(chain(u14))[0] != hashes(chain(u15))[0]
    assert hashes(chain(kern(0, "k_a", note="x"))) == hashes(chain(kern(0, "k_a", note="y")))


def test_missing_and_none_attributes_hash_alike() -> None:
    assert hashes(chain(kern(0, "k_a", priority=None))) == hashes(chain(kern(0, "k_a")))


def test_child_graph_changes_reach_the_parent() -> None:
    t0, s0 = hashes(fork())
    t1, s1 = hashes(fork(child_grid=3))
    assert t0 == t1 and s0 != s1
    child = chain(kern(1, "k_other"))
    renamed = RawGraph(fork().nodes[:-1] + (RawNode(6, K.GRAPH, {}, (child,)),), fork().edges)
    assert hashes(renamed)[0] != t0


def test_parallel_look_alikes_keep_topology_when_shapes_swap() -> None:
    """Grids swapped between parallel k_x: same topology, and diff pairs by position."""
    a = snapshot_from_raw(fork(grid_b=1, grid_c=2))
    b = snapshot_from_raw(fork(grid_b=2, grid_c=1))
    assert a.topology_hash == b.topology_hash
    d = diff_snapshots(a, b)
    assert d.topology_equal and not d.shape_equal and d.summary() == "launch shape"


def test_attribute_values_are_normalized() -> None:
    s = snapshot_from_raw(chain(RawNode(0, K.KERNEL, {"name": "k_a", "grid": (4, 1, 1)})))
    assert s.nodes[0].attrs["grid"] == [4, 1, 1]


@pytest.mark.parametrize("raw,match", [
    (RawGraph((kern(0, "k_a"), kern(1, "k_b")), ((0, 1), (1, 0))), "cycle"),
    (RawGraph((kern(0, "k_a"),), ((0, 0),)), "cycle"),
    (RawGraph((kern(0, "k_a"),), ((0, 9),)), "unknown node id 9"),
    (RawGraph((kern(0, "k_a"), kern(0, "k_b")), ()), "twice"),
    (RawGraph((RawNode(0, K.KERNEL, {"name": object()}),), ()), "not a JSON value"),
    (RawGraph((RawNode(0, K.KERNEL, {"x": float("nan")}),), ()), "JSON cannot hold"),
])
def test_reader_bugs_raise(raw: RawGraph, match: str) -> None:
    with pytest.raises(GraphcertError, match=match):
        snapshot_from_raw(raw)


def test_duplicate_edges_count_once() -> None:
    once = RawGraph((kern(0, "k_a"), kern(1, "k_b")), ((0, 1),))
    twice = RawGraph((kern(0, "k_a"), kern(1, "k_b")), ((0, 1), (0, 1)))
    assert snapshot_from_raw(once) == snapshot_from_raw(twice)


def test_empty_graph() -> None:
    s = snapshot_from_raw(RawGraph((), ()))
    assert s.node_count == 0 and s.counts() == {}
    assert snapshot_from_json(snapshot_to_json(s)) == s
