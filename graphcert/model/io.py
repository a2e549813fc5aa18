"""Snapshots as JSON documents: write atomically, read back with one-line errors. Pure."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from graphcert.errors import GraphcertError, InputError
from graphcert.fileio import atomic_write_text
from graphcert.model.kinds import NodeKind
from graphcert.model.snapshot import GraphSnapshot, RawGraph, RawNode, snapshot_from_raw

SNAPSHOT_KIND = "graphcert.snapshot"
SNAPSHOT_SCHEMA_VERSION = 1
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
        "edges": [[a, b] for a, b in s.edges],
    }


def snapshot_to_json(s: GraphSnapshot) -> dict[str, Any]:
    """The JSON document of a snapshot (child graphs nested in their parent node)."""
    body = _graph_doc(s)
    return {
        "schema_version": SNAPSHOT_SCHEMA_VERSION,
        "kind": SNAPSHOT_KIND,
        "topology_hash": body["topology_hash"],
        "shape_hash": body["shape_hash"],
        "counts": body["counts"],
        "meta": s.meta,
        "nodes": body["nodes"],
        "edges": body["edges"],
    }


class _Bad(Exception):
    """A problem at a place in the document; turned into one InputError line."""


def _field(d: dict[str, Any], name: str, where: str) -> Any:
    if name not in d:
        raise _Bad(f"missing field '{where}{name}'")
    return d[name]


def _int(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Bad(f"field '{where}' must be an integer, got {value!r}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Bad(f"field '{where}' must be a list, got {type(value).__name__}")
    return value


def _raw_from_doc(d: Any, where: str) -> RawGraph:
    """Rebuild what a reader would have produced, so the hashes can be recomputed."""
    if not isinstance(d, dict):
        raise _Bad(f"field '{where or 'document'}' must be an object")
    prefix = f"{where}." if where else ""
    for name in _REQUIRED:
        _field(d, name, prefix)
    nodes_doc = _list(d["nodes"], f"{prefix}nodes")
    edges: list[tuple[int, int]] = []
    for i, e in enumerate(_list(d["edges"], f"{prefix}edges")):
        w = f"{prefix}edges[{i}]"
        if not isinstance(e, list) or len(e) != 2:
            raise _Bad(f"field '{w}' must be a [from, to] pair")
        edges.append((_int(e[0], w), _int(e[1], w)))
    preds: dict[int, list[int]] = {}
    for a, b in edges:
        preds.setdefault(b, []).append(a)
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
            raise _Bad(f"field '{w}.kind': unknown node kind {kind_name!r}") from None
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


def _check_hashes(d: dict[str, Any], s: GraphSnapshot, where: str) -> None:
    """Stored fingerprints equal recomputed ones, here and in every nested child graph."""
    prefix = f"{where}." if where else ""
    for name in ("topology_hash", "shape_hash"):
        if d[name] != getattr(s, name):
            raise _Bad(f"corrupt or edited: {prefix}{name} does not match its nodes and edges")
    for i, (nd, node) in enumerate(zip(d["nodes"], s.nodes, strict=True)):
        # Equal hashes but another order: the file was rearranged, not written by graphcert.
        if nd["kind"] != node.kind.value or sorted(nd["deps"]) != list(node.deps):
            raise _Bad(f"corrupt or edited: {prefix}nodes are not in canonical order")
        kids = nd.get("children", [])
        for j, (cd, child) in enumerate(zip(kids, node.children, strict=True)):
            _check_hashes(cd, child, f"{prefix}nodes[{i}].children[{j}]")


def snapshot_from_json(d: Any, *, source: str = "snapshot") -> GraphSnapshot:
    """Parse and verify a snapshot document; InputError naming `source` when unusable.

    The fingerprints are recomputed from the nodes and edges and must match the stored ones."""
    try:
        return _from_json(d)
    except _Bad as exc:
        raise InputError(f"{source}: {exc}") from None
    except InputError as exc:
        raise InputError(f"{source}: {exc.message}", hint=exc.hint) from None


def _from_json(d: Any) -> GraphSnapshot:
    if not isinstance(d, dict):
        raise _Bad(f"not a graphcert snapshot (the JSON is a {type(d).__name__}, "
                   "not an object)")
    kind = d.get("kind")
    if kind != SNAPSHOT_KIND:
        if "kind" not in d:
            raise _Bad("not a graphcert snapshot (no 'kind' field)")
        if kind in _CERTIFICATE_KINDS or isinstance(d.get("tool"), dict):
            raise InputError(f"is a graphcert certificate ({kind!r}), not a snapshot",
                             hint="render certificates with graphcert show")
        raise _Bad(f"not a graphcert snapshot (kind is {kind!r})")
    version = _int(_field(d, "schema_version", ""), "schema_version")
    if version > SNAPSHOT_SCHEMA_VERSION:
        raise InputError(f"snapshot schema_version {version} is newer than this graphcert "
                         f"reads ({SNAPSHOT_SCHEMA_VERSION})", hint="upgrade graphcert")
    if version < 1:
        raise _Bad(f"unknown snapshot schema_version {version}")
    raw = _raw_from_doc(d, "")
    meta = d.get("meta", {})
    if not isinstance(meta, dict):
        raise _Bad("field 'meta' must be an object")
    try:
        s = snapshot_from_raw(raw, meta=meta)
    except GraphcertError as exc:
        # A cycle or a dangling edge cannot come from graphcert's own writer.
        raise _Bad(f"corrupt or edited: {exc.message}") from None
    _check_hashes(d, s, "")
    return s


# The name other layers look for when turning an embedded snapshot document back into one.
snapshot_from_dict = snapshot_from_json


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
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot be read: {exc.strerror or exc}") from None
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{p}: not JSON (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}: not JSON ({exc.msg} at line {exc.lineno} column "
                         f"{exc.colno})") from None
    return snapshot_from_json(doc, source=str(p))


__all__ = [
    "SNAPSHOT_KIND",
    "SNAPSHOT_SCHEMA_VERSION",
    "load_snapshot",
    "save_snapshot",
    "snapshot_from_dict",
    "snapshot_from_json",
    "snapshot_to_json",
]
