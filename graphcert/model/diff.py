"""What changed between two snapshots: nodes added, removed, and changed field by field. Pure."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from graphcert.jsontypes import JSONObject
from graphcert.model.align import align
from graphcert.model.jsontext import short_hash
from graphcert.model.kinds import KINDS, NodeKind
from graphcert.model.params import PARAM_POINTERS, PARAM_VALUES, param_change_lines
from graphcert.model.snapshot import EdgeData, GraphSnapshot, NodeRecord

ChangeClass = Literal["parameters only", "launch shape", "topology"]


class FieldChange(NamedTuple):
    """One field of one node that differs: node index in a and in b, field, both values.

    `field` is an attribute key, "deps" (predecessors, both sides in b's numbering; one on
    a node of a that b lacks as "a<i> (removed)"), "edge_data" (the CUDA 13 data of its
    incoming edges, {predecessor: data}), or
    "children" (a child graph or conditional body differs; see SnapshotDiff.child_diffs)."""

    index_a: int
    index_b: int
    field: str
    value_a: Any
    value_b: Any


class ChildDiff(NamedTuple):
    """The diff of child graph `position` (0 for a child graph node, the body number for a
    conditional) of node index_a in a / index_b in b; `kind` is that node's kind."""

    index_a: int
    index_b: int
    position: int
    kind: NodeKind
    diff: SnapshotDiff


@dataclass(frozen=True)
class SnapshotDiff:
    """The difference between snapshots a and b."""

    topology_equal: bool
    shape_equal: bool
    added: tuple[NodeRecord, ...]  # nodes of b with no counterpart in a
    removed: tuple[NodeRecord, ...]  # nodes of a with no counterpart in b
    changed: tuple[FieldChange, ...]
    child_diffs: tuple[ChildDiff, ...] = ()

    @property
    def identical(self) -> bool:
        """No difference at all, parameter values included."""
        return not (self.added or self.removed or self.changed)

    def summary(self) -> ChangeClass:
        """The class of the change, in the words `verify` uses from one class to the next."""
        if not self.topology_equal:
            return "topology"
        if not self.shape_equal:
            return "launch shape"
        return "parameters only"

    def summary_lines(self, prefix_a: str = "", prefix_b: str = "") -> list[str]:
        """One plain line per difference ("removed 4 kernel k_c", "2: grid [4, 1, 1] ->
        [8, 1, 1]"), child graphs as "7.1" / "8[0].0" like the inventory table."""
        lines = [f"removed {prefix_a}{n.index} {_label(n)}" for n in self.removed]
        lines += [f"added {prefix_b}{n.index} {_label(n)}" for n in self.added]
        for c in self.changed:
            if c.field == "children" and any(d.index_a == c.index_a for d in self.child_diffs):
                continue  # listed in detail below
            at = (f"{prefix_a}{c.index_a}" if c.index_a == c.index_b and prefix_a == prefix_b
                  else f"{prefix_a}{c.index_a}->{prefix_b}{c.index_b}")
            if c.field == PARAM_POINTERS:
                continue  # which parameters were pointers: said by the values' lines
            if c.field == PARAM_VALUES:
                lines += [f"{at}: {line}"
                          for line in param_change_lines(c.value_a, c.value_b)]
                continue
            lines.append(f"{at}: {c.field} {_json(c.value_a)} -> {_json(c.value_b)}")
        for d in self.child_diffs:
            sub = "." if d.kind is NodeKind.GRAPH else f"[{d.position}]."
            lines += d.diff.summary_lines(f"{prefix_a}{d.index_a}{sub}",
                                          f"{prefix_b}{d.index_b}{sub}")
        return lines

    def to_dict(self) -> JSONObject:
        """JSON-able form (for `diff --json`); nodes as {index, kind, name}."""
        return {
            "summary": self.summary(),
            "topology_equal": self.topology_equal,
            "shape_equal": self.shape_equal,
            "removed": [_brief(n) for n in self.removed],
            "added": [_brief(n) for n in self.added],
            "changed": [c._asdict() for c in self.changed],
            "children": [{"index_a": d.index_a, "index_b": d.index_b, "position": d.position,
                          "kind": d.kind.value, "diff": d.diff.to_dict()}
                         for d in self.child_diffs],
        }


def _label(n: NodeRecord) -> str:
    return f"{n.kind.value} {n.name}" if n.name else n.kind.value


def _brief(n: NodeRecord) -> dict[str, Any]:
    return {"index": n.index, "kind": n.kind.value, "name": n.name}


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def node_signature(node: NodeRecord) -> tuple[str, str]:
    """What aligns nodes of two different topologies: kind, and what names a node of that
    kind (KindSpec.name_attr: a kernel's function)."""
    return node.kind.value, (node.name or "") if KINDS[node.kind].name_attr else ""


def _in_edge_data(s: GraphSnapshot) -> dict[int, dict[int, EdgeData]]:
    found: dict[int, dict[int, EdgeData]] = {}
    for a, b, d in s.edge_data:
        found.setdefault(b, {})[a] = d
    return found


def _data_json(data: dict[int, EdgeData]) -> dict[str, Any]:
    return {str(k): v.to_json() for k, v in sorted(data.items())}


def _child_summary(s: GraphSnapshot) -> str:
    return (f"{s.node_count} nodes, topology {short_hash(s.topology_hash)}, "
            f"shape {short_hash(s.shape_hash)}")


_EdgeMaps = tuple[dict[int, dict[int, EdgeData]], dict[int, dict[int, EdgeData]],
                  dict[int, int]]


def _compare(a: NodeRecord, b: NodeRecord, deps_b_from_a: tuple[int | str, ...] | None,
             changes: list[FieldChange], child_diffs: list[ChildDiff],
             data: _EdgeMaps | None = None) -> None:
    if a.kind is not b.kind:
        changes.append(FieldChange(a.index, b.index, "kind", a.kind.value, b.kind.value))
    # Look-alike nodes share one attrs dict (snapshot_from_raw and the loader intern them).
    same = a.attrs is b.attrs or a.attrs == b.attrs
    for key in () if same else sorted(set(a.attrs) | set(b.attrs)):
        va, vb = a.attrs.get(key), b.attrs.get(key)
        if va != vb:
            changes.append(FieldChange(a.index, b.index, key, va, vb))
    if deps_b_from_a is not None and list(deps_b_from_a) != list(b.deps):
        # Both sides in b's numbering, so a dependency moved to another node never reads
        # "0 -> 0"; one on a node of a with no counterpart in b reads "a<i> (removed)".
        changes.append(FieldChange(a.index, b.index, "deps", list(deps_b_from_a),
                                   list(b.deps)))
    if data is not None:
        data_a, data_b, a_to_b = data
        da, db = data_a.get(a.index, {}), data_b.get(b.index, {})
        if {a_to_b.get(k, -1): v for k, v in da.items()} != db:
            changes.append(FieldChange(a.index, b.index, "edge_data", _data_json(da),
                                       _data_json(db)))
    nested = []
    for j, (ca, cb) in enumerate(zip(a.children, b.children, strict=False)):
        d = diff_snapshots(ca, cb)
        if not d.identical:
            nested.append(ChildDiff(a.index, b.index, j, b.kind, d))
    if nested or len(a.children) != len(b.children):
        changes.append(FieldChange(a.index, b.index, "children",
                                   [_child_summary(c) for c in a.children],
                                   [_child_summary(c) for c in b.children]))
        child_diffs.extend(nested)


def diff_snapshots(a: GraphSnapshot, b: GraphSnapshot) -> SnapshotDiff:
    """Compare two snapshots node by node (recursing into child graphs).

    Equal topology: node i of a is node i of b (canonical order guarantees it). Otherwise the
    canonical sequences are aligned by node signature (kind, kernel name) with
    graphcert.model.align (difflib where affordable), nodes left over are paired by signature
    in order, and the rest are reported as removed from a / added in b."""
    changes: list[FieldChange] = []
    child_diffs: list[ChildDiff] = []
    topology_equal = a.topology_hash == b.topology_hash
    if topology_equal:
        for na, nb in zip(a.nodes, b.nodes, strict=True):
            _compare(na, nb, None, changes, child_diffs)
        return SnapshotDiff(True, a.shape_hash == b.shape_hash, (), (), tuple(changes),
                            tuple(child_diffs))

    sig_a = [node_signature(n) for n in a.nodes]
    sig_b = [node_signature(n) for n in b.nodes]
    a_to_b = align(sig_a, sig_b)
    # A new edge can move a node far in canonical order; pair such left-overs by signature
    # (in order) so they show as a change of deps, not as removed and added again.
    spare_b: dict[tuple[str, str], deque[int]] = {}
    matched = set(a_to_b.values())
    for ib, sig in enumerate(sig_b):
        if ib not in matched:
            spare_b.setdefault(sig, deque()).append(ib)
    for ia, sig in enumerate(sig_a):
        if ia not in a_to_b and spare_b.get(sig):
            a_to_b[ia] = spare_b[sig].popleft()
    maps = (_in_edge_data(a), _in_edge_data(b), a_to_b)
    for ia, ib in sorted(a_to_b.items()):
        na, nb = a.nodes[ia], b.nodes[ib]
        # a's dependencies in b's numbering; one on a removed node stays visible by name.
        in_b = [a_to_b[d] for d in na.deps if d in a_to_b]
        gone = [f"a{d} (removed)" for d in na.deps if d not in a_to_b]
        mapped: tuple[int | str, ...] = (*sorted(in_b), *gone)
        _compare(na, nb, mapped, changes, child_diffs, maps)
    matched_b = set(a_to_b.values())
    removed = tuple(n for n in a.nodes if n.index not in a_to_b)
    added = tuple(n for n in b.nodes if n.index not in matched_b)
    changes.sort(key=lambda c: (c.index_a, c.index_b))
    return SnapshotDiff(False, False, added, removed, tuple(changes), tuple(child_diffs))


__all__ = ["ChangeClass", "ChildDiff", "FieldChange", "SnapshotDiff", "diff_snapshots",
           "node_signature"]
