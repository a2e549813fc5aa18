"""Snapshots as JSON documents: write atomically, read back with one-line errors. Pure."""

from __future__ import annotations

import gc
import json
import os
import pickle
from pathlib import Path
from typing import Any

from graphcert.errors import GraphcertError, InputError, clip_repr
from graphcert.fileio import JSONProblem, atomic_write_text, parse_json
from graphcert.fileread import MAX_DOCUMENT_BYTES, read_bounded
from graphcert.jsontypes import JSONObject
from graphcert.model.kinds import NodeKind
from graphcert.model.snapshot import (
    EdgeData,
    GraphSnapshot,
    NodeRecord,
    RawEdge,
    RawGraph,
    RawNode,
    fingerprints_of,
    snapshot_from_raw,
)

SNAPSHOT_KIND = "graphcert.snapshot"
# 2: exact canonical order (BLISS), edge data, fingerprint scheme 2 (docs/fingerprints.md).
SNAPSHOT_SCHEMA_VERSION = 2
# A schema-1 file holds every field the new fingerprints hash except edge data (its reader
# dropped it), so it is re-fingerprinted on load rather than refused: old fixtures and saved
# inventories stay readable, and the note says what to do for an exact record.
V1_NOTE = ("re-fingerprinted from a schema-1 snapshot (its stored hashes are of the old "
           "scheme; edge data was not recorded): re-capture with `graphcert capture` to "
           "refresh it")
# Certificates written by graphcert verify/bench carry one of these kinds.
_CERTIFICATE_KINDS = ("topology", "bench")
_REQUIRED = ("topology_hash", "shape_hash", "nodes", "edges")


def _graph_doc(s: GraphSnapshot) -> dict[str, Any]:
    return {
        "topology_hash": s.topology_hash,
        "shape_hash": s.shape_hash,
        "counts": s.counts(),
        "nodes": [
            {
                "index": n.index,
                "kind": n.kind.value,
                "deps": list(n.deps),
                "attrs": n.attrs,
                "children": [_graph_doc(c) for c in n.children],
            }
            for n in s.nodes
        ],
        "edges": _edges_doc(s),
    }


def _edges_doc(s: GraphSnapshot) -> list[list[Any]]:
    data = {(a, b): d for a, b, d in s.edge_data}
    return [[a, b, data[(a, b)].to_json()] if (a, b) in data else [a, b] for a, b in s.edges]


def snapshot_to_json(s: GraphSnapshot) -> JSONObject:
    """The JSON document of a snapshot (child graphs nested in their parent node)."""
    body = _graph_doc(s)
    doc: JSONObject = {
        "schema_version": SNAPSHOT_SCHEMA_VERSION,
        "kind": SNAPSHOT_KIND,
        "topology_hash": body["topology_hash"],
        "shape_hash": body["shape_hash"],
        "counts": body["counts"],
        "meta": s.meta,
        "nodes": body["nodes"],
        "edges": body["edges"],
    }
    if s.notes:
        doc["notes"] = list(s.notes)
    return doc


class _Bad(Exception):
    """A problem at a place in the document; turned into one InputError line."""


def _field(d: dict[str, Any], name: str, where: str) -> Any:
    if name not in d:
        raise _Bad(f"missing field '{where}{name}'")
    return d[name]


def _int(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Bad(f"field '{where}' must be an integer, got {clip_repr(value)}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Bad(f"field '{where}' must be a list, got {type(value).__name__}")
    return value


def _edges_from_doc(doc: Any, where: str) -> list[RawEdge]:
    try:  # the common case, plain [from, to] pairs of integers, in one comprehension
        pairs = [(a, b) for a, b in _list(doc, where)]
        if all(type(a) is int and type(b) is int for a, b in pairs):
            return pairs  # type: ignore[return-value]
    except (TypeError, ValueError):
        pass  # edges with data, or something to report below
    edges: list[RawEdge] = []
    for i, e in enumerate(_list(doc, where)):
        w = f"{where}[{i}]"
        if not isinstance(e, list) or len(e) not in (2, 3):
            raise _Bad(f"field '{w}' must be a [from, to] pair or [from, to, edge data]")
        a, b = _int(e[0], w), _int(e[1], w)
        if len(e) == 2:
            edges.append((a, b))
            continue
        data = e[2]
        if not isinstance(data, dict) or set(data) != {"type", "from_port", "to_port"}:
            raise _Bad(f"field '{w}[2]' must be an object with type, from_port and to_port")
        edges.append((a, b, EdgeData(*(_int(data[k], f"{w}[2].{k}")
                                       for k in ("type", "from_port", "to_port")))))
    return edges


def _graph_fields(d: Any, where: str) -> tuple[str, list[Any]]:
    """(prefix for messages, node list) of one stored graph, its required fields checked."""
    if not isinstance(d, dict):
        raise _Bad(f"field '{where or 'document'}' must be an object")
    prefix = f"{where}." if where else ""
    for name in _REQUIRED:
        _field(d, name, prefix)
    return prefix, _list(d["nodes"], f"{prefix}nodes")


def _raw_from_doc(d: Any, where: str) -> RawGraph:
    """Rebuild what a reader would have produced, so the hashes can be recomputed."""
    prefix, nodes_doc = _graph_fields(d, where)
    edges = _edges_from_doc(d["edges"], f"{prefix}edges")
    preds: dict[int, list[int]] = {}
    for e in edges:
        preds.setdefault(e[1], []).append(e[0])
    nodes: list[RawNode] = []
    for i, nd in enumerate(nodes_doc):
        w = f"{prefix}nodes[{i}]"
        if not isinstance(nd, dict):
            raise _Bad(f"field '{w}' must be an object")
        index = _int(_field(nd, "index", f"{w}."), f"{w}.index")
        if index != i:
            raise _Bad(f"field '{w}.index' is {index}, expected {i}")
        kind_name = _field(nd, "kind", f"{w}.")
        try:
            kind = NodeKind(kind_name)
        except ValueError:
            raise _Bad(f"field '{w}.kind': unknown node kind {clip_repr(kind_name)}") from None
        deps = [_int(x, f"{w}.deps") for x in _list(_field(nd, "deps", f"{w}."), f"{w}.deps")]
        if sorted(deps) != sorted(preds.get(i, [])):
            raise _Bad(f"corrupt or edited: {w}.deps disagrees with the edges")
        attrs = _field(nd, "attrs", f"{w}.")
        if not isinstance(attrs, dict):
            raise _Bad(f"field '{w}.attrs' must be an object")
        kids = _list(nd.get("children", []), f"{w}.children")
        children = tuple(_raw_from_doc(c, f"{w}.children[{j}]") for j, c in enumerate(kids))
        nodes.append(RawNode(i, kind, attrs, children))
    return RawGraph(tuple(nodes), tuple(edges))


_KIND_OF = {k.value: k for k in NodeKind}


def _snapshot_from_doc(d: Any, where: str) -> GraphSnapshot:
    """A schema-2 graph as stored (children first), its fingerprints checked against its
    own nodes and edges. No canonicalising again: a file written elsewhere loads whatever
    BLISS build the reader has. One pass per list: a saved graph can have 10^5 nodes."""
    prefix, nodes_doc = _graph_fields(d, where)
    n = len(nodes_doc)
    preds: list[list[int]] = [[] for _ in range(n)]
    pairs: set[tuple[int, int]] = set()
    data: dict[tuple[int, int], EdgeData] = {}
    for e in _edges_from_doc(d["edges"], f"{prefix}edges"):
        a, b = e[0], e[1]
        # Canonical order is a topological order: every edge goes forward.
        if not 0 <= a < b < n or (a, b) in pairs:
            raise _Bad(f"corrupt or edited: {prefix}edges are not in canonical order")
        pairs.add((a, b))
        preds[b].append(a)
        if len(e) > 2 and not e[2].is_default:
            data[(a, b)] = e[2]
    records = []
    interned: dict[tuple[str, bytes], dict[str, Any]] = {}
    for i, nd in enumerate(nodes_doc):
        w = f"{prefix}nodes[{i}]"
        if type(nd) is not dict:
            raise _Bad(f"field '{w}' must be an object")
        try:
            index, kind_name, deps, attrs = nd["index"], nd["kind"], nd["deps"], nd["attrs"]
        except KeyError as exc:
            raise _Bad(f"missing field '{w}.{exc.args[0]}'") from None
        if index != i or type(index) is not int:
            raise _Bad(f"field '{w}.index' is {clip_repr(index)}, expected {i}")
        kind = _KIND_OF.get(kind_name) if isinstance(kind_name, str) else None
        if kind is None:
            raise _Bad(f"field '{w}.kind': unknown node kind {clip_repr(kind_name)}")
        mine = preds[i]
        mine.sort()
        try:  # deps of another type (null, text) cannot sort against ints: as corrupt
            agree = isinstance(deps, list) and sorted(deps) == mine
        except TypeError:
            agree = False
        if not agree:
            raise _Bad(f"corrupt or edited: {w}.deps disagrees with the edges")
        if type(attrs) is not dict:
            raise _Bad(f"field '{w}.attrs' must be an object")
        # Look-alikes share one attrs dict, as snapshot_from_raw makes them (memory, and
        # the inventory formats each distinct node once).
        attrs = interned.setdefault((kind_name, pickle.dumps(attrs)), attrs)
        kids = nd.get("children")
        children = tuple(_snapshot_from_doc(c, f"{w}.children[{j}]")
                         for j, c in enumerate(_list(kids, f"{w}.children"))) if kids else ()
        records.append(NodeRecord(i, kind, tuple(mine), attrs, children))
    edges = tuple(sorted(pairs))
    meta = d.get("meta", {}) if not where else {}
    s = GraphSnapshot(tuple(records), edges, d["topology_hash"], d["shape_hash"], meta,
                      tuple((a, b, data[(a, b)]) for a, b in edges if (a, b) in data),
                      tuple(d.get("notes", ())) if not where else ())
    topology, shape = fingerprints_of(s)
    for name, value in (("topology_hash", topology), ("shape_hash", shape)):
        if d[name] != value:
            raise _Bad(f"corrupt or edited: {prefix}{name} does not match its nodes and edges")
    return s


def snapshot_from_json(d: object, *, source: str = "snapshot") -> GraphSnapshot:
    """Parse and verify a snapshot document; InputError naming `source` when unusable.

    The fingerprints are recomputed from the nodes and edges and must match the stored ones.
    `d` is whatever the JSON held: anything but a snapshot document is refused."""
    paused = gc.isenabled()
    gc.disable()  # as in snapshot_from_raw: no cycles are made, only many small objects
    try:
        return _from_json(d)
    except _Bad as exc:
        raise InputError(f"{source}: {exc}") from None
    except InputError as exc:
        raise InputError(f"{source}: {exc.message}", hint=exc.hint) from None
    finally:
        if paused:
            gc.enable()


def _from_json(d: Any) -> GraphSnapshot:
    if not isinstance(d, dict):
        raise _Bad(f"not a graphcert snapshot (the JSON is a {type(d).__name__}, "
                   "not an object)")
    kind = d.get("kind")
    if kind != SNAPSHOT_KIND:
        if "kind" not in d:
            raise _Bad("not a graphcert snapshot (no 'kind' field)")
        if kind in _CERTIFICATE_KINDS or isinstance(d.get("tool"), dict):
            raise InputError(f"is a graphcert certificate ({clip_repr(kind)}), not a snapshot",
                             hint="render certificates with graphcert show")
        raise _Bad(f"not a graphcert snapshot (kind is {clip_repr(kind)})")
    version = _int(_field(d, "schema_version", ""), "schema_version")
    if version > SNAPSHOT_SCHEMA_VERSION:
        raise InputError(f"snapshot schema_version {version} is newer than this graphcert "
                         f"reads ({SNAPSHOT_SCHEMA_VERSION})", hint="upgrade graphcert")
    if version < 1:
        raise _Bad(f"unknown snapshot schema_version {version}")
    meta = d.get("meta", {})
    if not isinstance(meta, dict):
        raise _Bad("field 'meta' must be an object")
    notes = d.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(x, str) for x in notes):
        raise _Bad("field 'notes' must be a list of strings")
    if version == 1:
        try:
            return snapshot_from_raw(_raw_from_doc(d, ""), meta=meta,
                                     notes=(*notes, V1_NOTE))
        except GraphcertError as exc:
            # A cycle or a dangling edge cannot come from graphcert's own writer.
            raise _Bad(f"corrupt or edited: {exc.message}") from None
    return _snapshot_from_doc(d, "")


# The name other layers look for when turning an embedded snapshot document back into one.


def save_snapshot(path: str | os.PathLike[str], s: GraphSnapshot) -> Path:
    """Write a snapshot as JSON atomically (temp file in the same folder, then rename)."""
    target = Path(path)
    text = json.dumps(snapshot_to_json(s), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    try:
        return atomic_write_text(target, text)
    except OSError as exc:
        raise InputError(f"{target}: cannot write: {exc.strerror or exc}") from exc


def load_snapshot(path: str | os.PathLike[str]) -> GraphSnapshot:
    """Read and verify a snapshot file; InputError (one line, naming the file) when unusable."""
    p = Path(path)
    data = read_bounded(p, MAX_DOCUMENT_BYTES)  # FileProblem: one line naming the file
    try:  # the one strict reader: depth and integer length bounded, NaN/Infinity refused
        doc = parse_json(data)
    except JSONProblem as exc:
        raise InputError(f"{p}: {exc.problem}") from None
    return snapshot_from_json(doc, source=str(p))


__all__ = [
    "SNAPSHOT_KIND",
    "SNAPSHOT_SCHEMA_VERSION",
    "load_snapshot",
    "save_snapshot",
    "snapshot_from_json",
    "snapshot_to_json",
]
