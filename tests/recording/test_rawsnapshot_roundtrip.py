"""The collector's raw snapshot fields (docs/record-streams.md) turn into the attributes
graphcert's own reader made: each node of the snapshots recorded on GPUs (tests/fixtures) is
written back as the collector would write it, read by graphcert.recording.rawsnapshot, and
must give the same attributes and the same fingerprints. Kinds no fixture holds (external
semaphores, unread parameters or bodies, newer driver types) are SYNTHETIC nodes checked
against what graphcert.cuda.snapshot's readers return for them."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from _streamwriter import kernel_node

from graphcert.model import UNREAD_ATTR, GraphSnapshot, NodeKind, NodeRecord
from graphcert.model.io import load_snapshot
from graphcert.recording.rawsnapshot import (
    COND_TYPES,
    MEM_OPS,
    param_value,
    raw_graph,
    snapshot_of,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
_OPS = {v: k for k, v in MEM_OPS.items()}
_CONDS = {v: k for k, v in COND_TYPES.items()}


def _params(attrs: dict[str, Any]) -> dict[str, Any]:
    values, sizes = attrs.get("param_values"), attrs.get("param_sizes")
    if values is None:
        why = attrs.get(UNREAD_ATTR, {}).get("param_values")
        return {"params": None, "params_unread": why}
    hexes = [v.removeprefix("hex:") if isinstance(v, str) else v.to_bytes(n, "little").hex()
             for v, n in zip(values, sizes, strict=True)]
    return {"params": hexes, "pointers": attrs.get("param_pointers", [])}


def node_doc(n: NodeRecord) -> dict[str, Any]:
    """A recorded node as the collector writes it."""
    a, kind = n.attrs, n.kind
    number = kind.spec.driver_type
    if kind is NodeKind.KERNEL:
        return {"type": 0, "name": a["name"], "grid": a["grid"], "block": a["block"],
                "smem": a["shared_mem_bytes"], "param_sizes": a.get("param_sizes"),
                "cooperative": None if a.get("cooperative") is None else int(a["cooperative"]),
                "cluster": a.get("cluster_dim"), "priority": a.get("priority"), **_params(a)}
    if kind is NodeKind.MEMCPY:
        return {"type": 1, "src": a["direction"][0], "dst": a["direction"][-1],
                "width": a["width_bytes"], "height": a["height"], "depth": a["depth"]}
    if kind is NodeKind.MEMSET:
        return {"type": 2, **{k: a[k] for k in ("element_size", "width", "height", "value")}}
    if kind is NodeKind.GRAPH:
        return {"type": 4, "child": graph_doc(n.children[0])}
    if kind is NodeKind.BATCH_MEM_OP:
        return {"type": 12, "count": a["count"], "ops": [_OPS[o] for o in a["ops"]]}
    if kind is NodeKind.MEM_ALLOC:
        return {"type": 10, "bytes": a["bytes"]}
    if kind is NodeKind.CONDITIONAL:
        return {"type": 13, "cond_type": _CONDS[a["type"]], "size": a["size"],
                "bodies": [graph_doc(c) for c in n.children]}
    return {"type": number}


def graph_doc(s: GraphSnapshot) -> dict[str, Any]:
    data = {(a, b): d for a, b, d in s.edge_data}
    return {"nodes": [node_doc(n) for n in s.nodes],
            "edges": [[a, b, *data.get((a, b), (0, 0, 0))] for a, b in s.edges]}


def expected(n: NodeRecord) -> dict[str, Any]:
    """The node's attrs as graphcert's reader gives them where the driver reads conditional
    bodies (the fixtures' driver, 13.0, had the DOT print read them: same fingerprints)."""
    attrs = dict(n.attrs)
    if n.kind is NodeKind.CONDITIONAL:
        attrs["bodies_read"] = "driver"
    if n.kind is not NodeKind.UNKNOWN and attrs.get("driver_type", 0) is None:
        del attrs["driver_type"]  # the DOT path's leftover label guess, None: not hashed
    return attrs


def _walk(a: GraphSnapshot, b: GraphSnapshot, seen: set[NodeKind]) -> None:
    assert len(a.nodes) == len(b.nodes)
    for x, y in zip(a.nodes, b.nodes, strict=True):
        assert (x.kind, x.deps) == (y.kind, y.deps)
        assert y.attrs == expected(x), f"{x.kind.value} node {x.index}"
        seen.add(x.kind)
        for cx, cy in zip(x.children, y.children, strict=True):
            _walk(cx, cy, seen)


@cache
def recorded() -> tuple[tuple[str, GraphSnapshot], ...]:
    """Every snapshot recorded with kernel parameter values."""
    paths = sorted([*FIXTURES.glob("snapshots/*.snapshot.json"),
                    *FIXTURES.glob("every_kind/*.snapshot.json"),
                    *FIXTURES.glob("record/*.snapshots/*.json")])
    out = []
    for p in paths:
        if '"param_values"' in p.read_text(encoding="utf-8"):
            out.append((str(p.relative_to(FIXTURES)), load_snapshot(p)))
    return tuple(out)


def test_fixtures_found() -> None:
    assert len(recorded()) >= 25


@pytest.mark.parametrize("name", [n for n, _ in recorded()])
def test_recorded_snapshot_round_trip(name: str) -> None:
    original = dict(recorded())[name]
    doc = json.loads(json.dumps(graph_doc(original)))  # through JSON, as the stream holds it
    got, why = snapshot_of(doc)
    assert why is None and got is not None
    assert (got.topology_hash, got.shape_hash) == (original.topology_hash,
                                                   original.shape_hash)
    _walk(original, got, set())


def test_every_recorded_kind_is_covered() -> None:
    seen: set[NodeKind] = set()
    for _, s in recorded():
        _walk(s, snapshot_of(graph_doc(s))[0] or s, seen)
    synthetic = {NodeKind.EXT_SEMAS_SIGNAL, NodeKind.EXT_SEMAS_WAIT, NodeKind.UNKNOWN}
    assert seen | synthetic == set(NodeKind)


def _first_of(kind: NodeKind) -> NodeRecord | None:
    def walk(s: GraphSnapshot) -> NodeRecord | None:
        for n in s.nodes:
            if n.kind is kind:
                return n
            for c in n.children:
                if (found := walk(c)) is not None:
                    return found
        return None
    return next((n for _, s in recorded() if (n := walk(s)) is not None), None)


RECORDED_KINDS = [k for k in NodeKind if k not in (NodeKind.EXT_SEMAS_SIGNAL,
                                                   NodeKind.EXT_SEMAS_WAIT, NodeKind.UNKNOWN)]


@pytest.mark.parametrize("kind", RECORDED_KINDS, ids=[k.value for k in RECORDED_KINDS])
def test_each_recorded_kind_alone(kind: NodeKind) -> None:
    """One node of each kind a GPU recorded, alone in a graph: the reader's attrs back."""
    node = _first_of(kind)
    assert node is not None, f"no recorded {kind.value} node in tests/fixtures"
    raw, = raw_graph({"nodes": [json.loads(json.dumps(node_doc(node)))], "edges": []}).nodes
    assert (raw.kind, raw.attrs) == (kind, expected(node))
    assert len(raw.children) == len(node.children)


@pytest.mark.parametrize(("number", "kind"), [(8, NodeKind.EXT_SEMAS_SIGNAL),
                                              (9, NodeKind.EXT_SEMAS_WAIT)])
def test_synthetic_external_semaphores(number: int, kind: NodeKind) -> None:
    node, = raw_graph({"nodes": [{"type": number, "count": 3}], "edges": []}).nodes
    assert (node.kind, node.attrs) == (kind, {"count": 3})  # as the reader's _ext_semas_*


def test_synthetic_unknown_driver_type() -> None:
    node, = raw_graph({"nodes": [{"type": 99}], "edges": []}).nodes
    assert (node.kind, node.attrs) == (NodeKind.UNKNOWN, {"driver_type": 99})


def test_synthetic_unread_parameters() -> None:
    doc = kernel_node(params=None, params_unread="the driver gave no parameter layout")
    node, = raw_graph({"nodes": [doc], "edges": []}).nodes
    assert node.attrs[UNREAD_ATTR] == {"param_values": "the driver gave no parameter layout"}
    assert "param_values" not in node.attrs and "param_pointers" not in node.attrs
    read, _ = snapshot_of({"nodes": [kernel_node()], "edges": []})
    unread, _ = snapshot_of({"nodes": [doc], "edges": []})
    assert read is not None and unread is not None
    assert (read.topology_hash, read.shape_hash) == (unread.topology_hash, unread.shape_hash)


def test_synthetic_unread_conditional_is_the_readers_unread_conditional() -> None:
    node, = raw_graph({"nodes": [{"type": 13, "unread": "synthetic: no cuGraphNodeGetParams"}],
                       "edges": []}).nodes
    why = "synthetic: no cuGraphNodeGetParams"
    # graphcert.model.dotread.dot_conditional's answer when it cannot read the node
    assert (node.kind, node.children) == (NodeKind.CONDITIONAL, ())
    assert node.attrs == {"type": None, "size": None, "bodies_read": None,
                          UNREAD_ATTR: {"type": why, "size": why}}
    named, = raw_graph({"nodes": [{"type": 13, "cond_type": "CU_GRAPH_COND_TYPE_WHILE",
                                   "size": 1, "unread": why}], "edges": []}).nodes
    assert named.attrs == {"type": "while", "size": 1, "bodies_read": None,
                           UNREAD_ATTR: {"bodies": why}}


def test_parameter_values_and_cuts() -> None:
    assert param_value("2a000000") == 42
    assert param_value("0100000000000080") == 0x8000000000000001
    assert param_value("aabbcc") == "hex:aabbcc"
    whole = "ab" * 300
    assert param_value(whole) == "hex:" + "ab" * 256 + "...(+44 bytes)"
    assert param_value("ab" * 256 + "...(+44 bytes)") == param_value(whole)


@pytest.mark.parametrize("bad", [
    {"nodes": [{"type": 0}], "edges": []},
    {"nodes": [kernel_node(params=["zz"])], "edges": []},
    {"nodes": [kernel_node(pointers=[[1, 2]])], "edges": []},
    {"nodes": [{"type": 1, "src": "X", "dst": "D", "width": 1, "height": 1, "depth": 1}],
     "edges": []},
    {"nodes": [{"type": 5}], "edges": [[0, 3, 0, 0, 0]]},
    {"nodes": [{"type": 4}], "edges": []},
    {"nodes": "synthetic", "edges": []},
    [],
])
def test_malformed_snapshots_are_a_reason(bad: object) -> None:
    got, why = snapshot_of(bad)
    assert got is None and why is not None and why.startswith("the collector's snapshot")


def _nested(depth: int) -> dict[str, Any]:
    """SYNTHETIC: an empty node inside `depth` child graphs."""
    doc: dict[str, Any] = {"nodes": [{"type": 5}], "edges": []}  # CU_GRAPH_NODE_TYPE_EMPTY
    for _ in range(depth):
        doc = {"nodes": [{"type": 4, "child": doc}], "edges": []}
    return doc


def test_graphs_nested_as_deep_as_the_collector_reads_are_read() -> None:
    snapshot, why = snapshot_of(_nested(40))  # the collector reads down to 64
    assert why is None and snapshot is not None
    deepest = snapshot
    for _ in range(40):
        (node,) = deepest.nodes
        assert node.kind is NodeKind.GRAPH
        (deepest,) = node.children
    assert [n.kind for n in deepest.nodes] == [NodeKind.EMPTY]
    assert snapshot_of(_nested(64))[1] is None
    refused = snapshot_of(_nested(65))[1]
    assert refused is not None and "more than 64 deep" in refused
