"""Graph snapshots: what a reader saw (RawGraph) and its canonical, fingerprinted form
(GraphSnapshot). Pure: no CUDA import."""

from __future__ import annotations

import hashlib
import json
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from graphcert.errors import GraphcertError
from graphcert.model.canonical import canonical_order, find_cycle_nodes
from graphcert.model.kinds import SHAPE_ATTRS, TOPOLOGY_ATTRS, NodeKind

# Set in a snapshot's meta when the canonical-order search ran out of budget.
INEXACT_META_KEY = "canonical_order"
INEXACT_META_NOTE = ("greedy: search budget exceeded, fingerprints may depend on the "
                     "driver's node order")


@dataclass(frozen=True)
class RawNode:
    """One node as a reader produced it; `id` is arbitrary and local to one read."""

    id: int
    kind: NodeKind
    attrs: dict[str, Any]  # JSON-able scalars / lists only; never pointers or handles
    children: tuple[RawGraph, ...] = ()  # a child graph (1) or conditional bodies (n)


@dataclass(frozen=True)
class RawGraph:
    """Nodes and (from_id, to_id) edges as a reader produced them, in any order."""

    nodes: tuple[RawNode, ...]
    edges: tuple[tuple[int, int], ...]


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
        """The kernel name of a kernel node, else None."""
        value = self.attrs.get("name") if self.kind is NodeKind.KERNEL else None
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class GraphSnapshot:
    """A graph in canonical node order with its two fingerprints (sha256 hex).

    Equal `topology_hash`: cuGraphExecUpdate can apply. Equal `shape_hash`: only parameter
    values differ. `meta` (workload, capacity, n, mode, device, ...) is free-form, not hashed.
    """

    nodes: tuple[NodeRecord, ...]
    edges: tuple[tuple[int, int], ...]
    topology_hash: str
    shape_hash: str
    meta: dict[str, Any] = field(default_factory=dict)

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


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, no NaN: the text fingerprints are taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def _sha256(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


_PLAIN = (int, str, bool, type(None))


def normalize_attr(value: Any, where: str) -> Any:
    """A JSON-able copy of an attribute value: tuples become lists, numpy scalars Python ones."""
    kind = type(value)
    if kind in _PLAIN:  # the common case, checked by exact type: snapshots can be 10^4 nodes
        return value
    if kind is list and all(type(v) is int for v in value):
        return list(value)
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        if f != f or f in (float("inf"), float("-inf")):
            raise GraphcertError(f"{where} is {f}, which JSON cannot hold")
        return f
    if isinstance(value, (list, tuple)):
        return [normalize_attr(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        return {str(k): normalize_attr(v, f"{where}.{k}") for k, v in value.items()}
    raise GraphcertError(
        f"{where} is a {type(value).__name__}, not a JSON value",
        hint="a snapshot reader must record plain numbers, strings and lists, never handles",
    )


def _items(kind: NodeKind, attrs: Mapping[str, Any], children: tuple[GraphSnapshot, ...]
           ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The (topology item, shape item) hashed for one node. A missing attr and None are
    the same: a reader that could not read something must not create a difference."""
    topo_keys = TOPOLOGY_ATTRS.get(kind, frozenset())
    shape_keys = topo_keys | SHAPE_ATTRS.get(kind, frozenset())
    topo = {
        "kind": kind.value,
        "attrs": {k: attrs[k] for k in sorted(topo_keys) if attrs.get(k) is not None},
        "children": [c.topology_hash for c in children],
    }
    shape = {
        "kind": kind.value,
        "attrs": {k: attrs[k] for k in sorted(shape_keys) if attrs.get(k) is not None},
        "children": [c.shape_hash for c in children],
    }
    return topo, shape


def _content(s: GraphSnapshot) -> list[Any]:
    """Everything in a (canonical) snapshot, values included, as JSON-able data."""
    return [[n.kind.value, list(n.deps), n.attrs, [_content(c) for c in n.children]]
            for n in s.nodes]


def _value_label(kind: NodeKind, attrs: Mapping[str, Any], children: tuple[GraphSnapshot, ...]
                 ) -> str:
    """Everything else about a node: never hashed, only used to order look-alikes."""
    hashed = TOPOLOGY_ATTRS.get(kind, frozenset()) | SHAPE_ATTRS.get(kind, frozenset())
    values = {k: v for k, v in attrs.items() if k not in hashed}
    if not values and not children:
        return ""
    return canonical_json({"attrs": values, "children": [_sha256(_content(c)) for c in children]})


def snapshot_from_raw(raw: RawGraph, *, meta: dict[str, Any] | None = None,
                      positions: dict[int, int] | None = None) -> GraphSnapshot:
    """Canonicalise a reader's graph and fingerprint it (child graphs first, recursively).

    Raises GraphcertError for duplicate ids, edges to unknown ids, cycles or attributes that
    are not JSON values: all of them reader bugs, never properties of a real CUDA graph."""
    nodes = raw.nodes
    local: dict[int, int] = {}
    kinds: list[NodeKind] = []
    for i, node in enumerate(nodes):
        if node.id in local:
            raise GraphcertError(f"snapshot reader produced node id {node.id} twice")
        try:
            kinds.append(NodeKind(node.kind))
        except ValueError:
            raise GraphcertError(f"node {node.id} has kind {node.kind!r}, not a NodeKind") from None
        local[node.id] = i
    n = len(nodes)
    edge_set: set[tuple[int, int]] = set()  # duplicates carry no meaning in a (from, to) list
    for a, b in raw.edges:
        if a not in local or b not in local:
            missing = a if a not in local else b
            raise GraphcertError(f"snapshot reader produced an edge {a}->{b} to unknown node "
                                 f"id {missing}")
        edge_set.add((local[a], local[b]))
    preds: list[list[int]] = [[] for _ in range(n)]
    succs: list[list[int]] = [[] for _ in range(n)]
    for a, b in sorted(edge_set):
        succs[a].append(b)
        preds[b].append(a)
    stuck = find_cycle_nodes(n, succs)
    if stuck:
        ids = ", ".join(str(nodes[i].id) for i in stuck[:8])
        raise GraphcertError(f"snapshot reader produced a cycle among node ids {ids}")

    attrs = [
        {str(k): normalize_attr(v, f"node {node.id} attr {k!r}") for k, v in node.attrs.items()}
        for node in nodes
    ]
    children = [tuple(snapshot_from_raw(c) for c in node.children) for node in nodes]
    items = [_items(kinds[i], attrs[i], children[i]) for i in range(n)]
    # Labels for ordering: a digest for topology, the canonical JSON itself for shape so
    # that parallel look-alikes order by value (grid 1 before grid 2): diffs pair them up.
    tsig = [_sha256(t) for t, _ in items]
    ssig = [canonical_json(s) for _, s in items]
    vsig = [_value_label(kinds[i], attrs[i], children[i]) for i in range(n)]
    order, exact = canonical_order(preds, succs, tsig, ssig, vsig)
    pos = [0] * n
    for p, v in enumerate(order):
        pos[v] = p
    if positions is not None:  # raw id -> canonical index, e.g. to name a failing node
        positions.update({nodes[v].id: p for p, v in enumerate(order)})

    records = []
    for p, v in enumerate(order):
        deps = tuple(sorted(pos[q] for q in preds[v]))
        records.append(NodeRecord(index=p, kind=kinds[v], deps=deps, attrs=attrs[v],
                                  children=children[v]))
    edges = tuple(sorted((pos[a], pos[b]) for a, b in edge_set))
    canon_edges = [list(e) for e in edges]
    topology_hash = _sha256({"nodes": [items[v][0] for v in order], "edges": canon_edges})
    shape_hash = _sha256({"nodes": [items[v][1] for v in order], "edges": canon_edges})
    info = dict(meta or {})
    if not exact:
        # Rare (huge symmetric graphs): say so where people and CI will see it.
        info[INEXACT_META_KEY] = INEXACT_META_NOTE
    return GraphSnapshot(tuple(records), edges, topology_hash, shape_hash, info)


__all__ = [
    "INEXACT_META_KEY",
    "INEXACT_META_NOTE",
    "GraphSnapshot",
    "NodeRecord",
    "RawGraph",
    "RawNode",
    "canonical_json",
    "normalize_attr",
    "snapshot_from_raw",
]
