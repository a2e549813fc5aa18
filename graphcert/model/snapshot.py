"""Graph snapshots: what a reader saw (RawGraph) and its canonical, fingerprinted form
(GraphSnapshot). Pure: no CUDA import. docs/fingerprints.md says exactly what is hashed."""

from __future__ import annotations

import functools
import gc
import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from graphcert.errors import GraphcertError
from graphcert.jsontypes import Doc
from graphcert.model.canonical import depth_order, find_cycle_nodes, labelled_order
from graphcert.model.jsontext import PLAIN_TYPES, canonical_json, normalize_attr, sha256_text
from graphcert.model.kinds import KINDS, NodeKind

FINGERPRINT_SCHEME = 2
"""Bumped whenever what is hashed changes; it is part of the hashed text."""


class EdgeData(NamedTuple):
    """CUDA 13 edge data (CUgraphEdgeData): dependency type and ports; all zero is a plain
    full dependency. Numbers as the driver defines them (type 1: programmatic; from_port 1:
    programmatic, 2: launch order)."""

    type: int = 0
    from_port: int = 0
    to_port: int = 0

    @property
    def is_default(self) -> bool:
        return self.type == 0 and self.from_port == 0 and self.to_port == 0

    def to_json(self) -> dict[str, int]:
        return {"from_port": self.from_port, "to_port": self.to_port, "type": self.type}


DEFAULT_EDGE = EdgeData()
RawEdge = tuple[int, int] | tuple[int, int, EdgeData]


@dataclass(frozen=True)
class RawNode:
    """One node as a reader produced it; `id` is arbitrary and local to one read."""

    id: int
    kind: NodeKind
    attrs: dict[str, Any]  # JSON-able scalars / lists only; never pointers or handles
    children: tuple[RawGraph, ...] = ()  # a child graph (1) or conditional bodies (n)


@dataclass(frozen=True)
class RawGraph:
    """Nodes and edges as a reader produced them, in any order. An edge is (from_id, to_id)
    or (from_id, to_id, EdgeData)."""

    nodes: tuple[RawNode, ...]
    edges: tuple[RawEdge, ...]


@dataclass(frozen=True)
class NodeRecord:
    """One node of a snapshot, at its canonical index. Treat `attrs` as read-only."""

    index: int
    kind: NodeKind
    deps: tuple[int, ...]  # canonical indices of its predecessors, ascending
    attrs: dict[str, Any]
    children: tuple[GraphSnapshot, ...] = ()

    @property
    def name(self) -> str | None:
        """What names the node (a kernel's function; see KindSpec.name_attr), else None."""
        key = KINDS[self.kind].name_attr
        value = self.attrs.get(key) if key else None
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class GraphSnapshot:
    """A graph in canonical node order with its two fingerprints (sha256 hex).

    Equal `topology_hash`: cuGraphExecUpdate can apply. Equal `shape_hash`: only parameter
    values differ. `meta` (workload, capacity, n, mode, device, ...) is free-form, not hashed.
    `edge_data` lists the edges whose CUDA 13 edge data is not all zero. `notes` say what a
    reader of this snapshot should know (e.g. re-fingerprinted from an older file)."""

    nodes: tuple[NodeRecord, ...]
    edges: tuple[tuple[int, int], ...]
    topology_hash: str
    shape_hash: str
    meta: dict[str, Any] = field(default_factory=dict)
    edge_data: tuple[tuple[int, int, EdgeData], ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def node_count(self) -> int:
        """Nodes of this graph, not counting those inside child graphs."""
        return len(self.nodes)

    def counts(self, recursive: bool = False) -> dict[str, int]:
        """Node count per kind (kind value -> count, in NodeKind order, non-zero only).

        recursive: also count the nodes of child graphs and conditional bodies."""
        tally: dict[NodeKind, int] = {}
        self._tally(tally, recursive)
        return {k.value: tally[k] for k in NodeKind if k in tally}

    def _tally(self, tally: dict[NodeKind, int], recursive: bool) -> None:
        for node in self.nodes:
            tally[node.kind] = tally.get(node.kind, 0) + 1
            if recursive:
                for child in node.children:
                    child._tally(tally, recursive)


def _normalized(node: RawNode) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in node.attrs.items():
        kind = type(v)
        if kind in PLAIN_TYPES:  # normalize_attr's fast paths, without formatting `where` for them
            out[k if type(k) is str else str(k)] = v
        elif kind is list and all(type(x) is int for x in v):  # grids, blocks, param sizes
            out[k if type(k) is str else str(k)] = list(v)
        else:
            out[str(k)] = normalize_attr(v, f"node {node.id} attr {k!r}")
    return out


@functools.cache
def _kind_tail(kind: NodeKind) -> str:
    return ',"kind":' + canonical_json(kind.value) + "}"


def _node_text(kind: NodeKind, attrs: Mapping[str, Any], children: list[str]) -> str:
    """canonical_json({"attrs": attrs, "children": children, "kind": kind.value}), joined
    from its parts (the keys' sorted order is fixed), so only the attributes are encoded."""
    return ('{"attrs":' + canonical_json(attrs) + ',"children":'
            + (canonical_json(children) if children else "[]") + _kind_tail(kind))


def _hashed_signatures(kind: NodeKind, attrs: Mapping[str, Any],
                       children: tuple[GraphSnapshot, ...]) -> tuple[str, str]:
    spec = KINDS[kind]
    topo = {k: attrs[k] for k in spec.topology if attrs.get(k) is not None}
    shape = {k: attrs[k] for k in spec.hashed if attrs.get(k) is not None}
    return (_node_text(kind, topo, [c.topology_hash for c in children]),
            _node_text(kind, shape, [c.shape_hash for c in children]))


def _signatures(kind: NodeKind, attrs: Mapping[str, Any], children: tuple[GraphSnapshot, ...]
                ) -> tuple[str, str, str]:
    """(topology, shape, value) signature of one node: canonical JSON texts. A missing attr
    and None are the same: a reader that could not read something must not create a
    difference. The value signature (everything, never hashed) only orders look-alikes."""
    t, s = _hashed_signatures(kind, attrs, children)
    hashed = KINDS[kind].hashed
    if not children and all(k in hashed for k in attrs):
        return t, s, s
    return t, s, _node_text(kind, attrs, [content_digest(c) for c in children])


def content_digest(s: GraphSnapshot) -> str:
    """sha256 of everything in a (canonical) snapshot, values included (never a fingerprint:
    it orders look-alike nodes whose children differ only in values)."""
    nodes = [[n.kind.value, list(n.deps), n.attrs, [content_digest(c) for c in n.children]]
             for n in s.nodes]
    data = [[a, b, d.to_json()] for a, b, d in s.edge_data]
    return sha256_text(canonical_json([nodes, data]))


def _edge_text(edges: list[tuple[int, int]], data: dict[tuple[int, int], EdgeData]) -> str:
    if not data:
        return canonical_json(edges)
    return canonical_json([[a, b, data[(a, b)].to_json()] if (a, b) in data else [a, b]
                           for a, b in edges])


def fingerprint_text(node_sigs: list[str], edges: list[tuple[int, int]] | str,
                     data: dict[tuple[int, int], EdgeData]) -> str:
    """The canonical JSON hashed into a fingerprint: {"edges", "nodes", "scheme"} with nodes
    (their signatures) in canonical order and edges [from, to] (plus the edge data object
    where not all zero) sorted, in canonical indices. Built by joining signature texts,
    which gives the same text as canonical_json of the whole object."""
    edge_text = edges if isinstance(edges, str) else _edge_text(edges, data)
    return ('{"edges":' + edge_text + ',"nodes":[' + ",".join(node_sigs)
            + '],"scheme":' + str(FINGERPRINT_SCHEME) + "}")


def _edge_list(raw: RawGraph, local: dict[int, int]) -> dict[tuple[int, int], EdgeData]:
    """(from, to) local indices -> edge data; one edge per pair, as CUDA allows."""
    try:  # the common case, plain (from, to) pairs, in one comprehension
        return dict.fromkeys([(local[a], local[b]) for a, b in raw.edges], DEFAULT_EDGE)  # type: ignore[misc]
    except (KeyError, ValueError):
        pass  # an unknown id (reported below) or edges with data
    found: dict[tuple[int, int], EdgeData] = {}
    for e in raw.edges:
        a, b = e[0], e[1]
        if a not in local or b not in local:
            missing = a if a not in local else b
            raise GraphcertError(f"snapshot reader produced an edge {a}->{b} to unknown node "
                                 f"id {missing}")
        data = EdgeData(*(int(x) for x in e[2])) if len(e) > 2 else DEFAULT_EDGE
        key = (local[a], local[b])
        if found.setdefault(key, data) != data:
            raise GraphcertError(f"snapshot reader produced the edge {a}->{b} twice with "
                                 "different edge data")
    return found


def _check_nodes(nodes: tuple[RawNode, ...]) -> tuple[dict[int, int], list[NodeKind]]:
    ids = [node.id for node in nodes]
    local = dict(zip(ids, range(len(ids)), strict=True))
    if len(local) < len(ids):
        seen: set[int] = set()
        twice = next(i for i in ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise GraphcertError(f"snapshot reader produced node id {twice} twice")
    kinds = [node.kind for node in nodes]
    for kind in set(kinds):
        if not isinstance(kind, NodeKind):
            try:
                NodeKind(kind)
            except ValueError:
                bad = next(n.id for n in nodes if n.kind == kind)
                raise GraphcertError(f"node {bad} has kind {kind!r}, not a NodeKind") from None
            kinds = [NodeKind(k) for k in kinds]
            break
    return local, kinds


def snapshot_from_raw(raw: RawGraph, *, meta: Doc | None = None,
                      positions: dict[int, int] | None = None,
                      notes: tuple[str, ...] = ()) -> GraphSnapshot:
    """Canonicalise a reader's graph and fingerprint it (child graphs first, recursively).

    Raises GraphcertError for duplicate ids, edges to unknown ids, cycles or attributes that
    are not JSON values: all of them reader bugs, never properties of a real CUDA graph."""
    # Building 10^5 records makes no garbage cycles, but the cyclic collector would scan
    # the whole heap several times meanwhile (a third of the time): pause it.
    paused = gc.isenabled()
    gc.disable()
    try:
        return _snapshot_from_raw(raw, meta, positions, notes)
    finally:
        if paused:
            gc.enable()


def _snapshot_from_raw(raw: RawGraph, meta: Doc | None,
                       positions: dict[int, int] | None, notes: tuple[str, ...]
                       ) -> GraphSnapshot:
    nodes = raw.nodes
    n = len(nodes)
    local, kinds = _check_nodes(nodes)
    edge_map = _edge_list(raw, local)
    pairs = sorted(edge_map)

    # Look-alike nodes share one normalised attrs dict and one set of signatures: a
    # 10^5-node chain has a handful of distinct nodes, and per-node Python work is the cost.
    # The memo key is only a cache key (never hashed): pickle is the fastest encoding that
    # keeps apart what normalises differently (true and 1, 1 and 1.0, "1" and 1).
    try:
        texts = list(map(pickle.dumps, [node.attrs for node in nodes]))
    except Exception:  # something pickle refuses: normalising names it (or copes)
        texts = [pickle.dumps(_normalized(node)) for node in nodes]
    keys = list(zip(kinds, texts, strict=True))
    memo: dict[tuple[NodeKind, bytes], tuple[dict[str, Any], tuple[str, str, str]]] = {}
    first = dict(zip(keys, range(n), strict=True))
    for key, i in first.items():
        normal = _normalized(nodes[i])
        memo[key] = (normal, _signatures(kinds[i], normal, ()))
    found = [memo[k] for k in keys]
    attrs = [f[0] for f in found]
    sigs = [f[1] for f in found]
    children: list[tuple[GraphSnapshot, ...]] = [()] * n
    for i, node in enumerate(nodes):
        if node.children:
            normal = _normalized(node)  # its own dict: children make it unlike any other
            kids = tuple(snapshot_from_raw(c) for c in node.children)
            attrs[i], children[i], sigs[i] = normal, kids, _signatures(kinds[i], normal, kids)

    data = {e: d for e, d in edge_map.items() if d is not DEFAULT_EDGE and not d.is_default}
    order = depth_order(n, pairs)  # a chain: the labels could not change its order
    if order is None:
        levels = [[s[2] for s in sigs], [s[1] for s in sigs], [s[0] for s in sigs]]
        order = labelled_order(n, pairs, levels, {e: canonical_json({"edge": d.to_json()})
                                                  for e, d in data.items()})
    if order is None:
        succs: list[list[int]] = [[] for _ in range(n)]
        for a, b in pairs:
            succs[a].append(b)
        stuck = find_cycle_nodes(n, succs)
        ids = ", ".join(str(nodes[i].id) for i in stuck[:8])
        raise GraphcertError(f"snapshot reader produced a cycle among node ids {ids}")
    pos = [0] * n
    for p, v in enumerate(order):
        pos[v] = p
    if positions is not None:  # raw id -> canonical index, e.g. to name a failing node
        positions.update({nodes[v].id: p for p, v in enumerate(order)})
    edges = sorted([(pos[a], pos[b]) for a, b in pairs])
    preds: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:  # sorted, so each list comes out ascending
        preds[b].append(a)
    records = tuple(map(NodeRecord, range(n), [kinds[v] for v in order], map(tuple, preds),
                        [attrs[v] for v in order], [children[v] for v in order]))
    cdata = {(pos[a], pos[b]): d for (a, b), d in data.items()}
    edge_text = _edge_text(edges, cdata)  # the same in both
    topology_hash = sha256_text(fingerprint_text([sigs[v][0] for v in order], edge_text, cdata))
    shape_hash = sha256_text(fingerprint_text([sigs[v][1] for v in order], edge_text, cdata))
    edge_data = tuple((a, b, cdata[(a, b)]) for a, b in edges if (a, b) in cdata)
    return GraphSnapshot(records, tuple(edges), topology_hash, shape_hash, dict(meta or {}),
                         edge_data, tuple(notes))


def fingerprints_of(s: GraphSnapshot) -> tuple[str, str]:
    """(topology, shape) fingerprints recomputed over a snapshot's own node order, without
    canonicalising again: what a loaded file is checked against (children checked apart)."""
    tsigs, ssigs = [], []
    # Keyed by the attrs dict itself: look-alikes share one (snapshot_from_raw and the JSON
    # loader intern them); the dict is kept alive by the snapshot, so ids stay unique.
    memo: dict[tuple[NodeKind, int], tuple[str, str]] = {}
    for node in s.nodes:
        if node.children:
            t, sh = _hashed_signatures(node.kind, node.attrs, node.children)
        else:
            key = (node.kind, id(node.attrs))
            got = memo.get(key)
            if got is None:
                got = memo[key] = _hashed_signatures(node.kind, node.attrs, ())
            t, sh = got
        tsigs.append(t)
        ssigs.append(sh)
    edges = list(s.edges)
    data = {(a, b): d for a, b, d in s.edge_data}
    edge_text = _edge_text(edges, data)
    return (sha256_text(fingerprint_text(tsigs, edge_text, data)),
            sha256_text(fingerprint_text(ssigs, edge_text, data)))


__all__ = [
    "DEFAULT_EDGE", "FINGERPRINT_SCHEME", "EdgeData", "GraphSnapshot", "NodeRecord", "RawEdge",
    "RawGraph", "RawNode", "canonical_json", "content_digest", "fingerprint_text",
    "fingerprints_of", "normalize_attr", "sha256_text", "snapshot_from_raw",
]
