"""A source graph as the injection collector wrote it (the raw driver fields of
docs/record-streams.md) turned into the RawGraph graphcert's own reader (graphcert.cuda.snapshot)
makes of the same graph, attribute for attribute, so the fingerprints agree with
`inventory`'s. Pure.

Node types are the driver's CUgraphNodeType numbers (cuda.h), mapped through NodeKind's one
table; a number this version does not know is an UNKNOWN node carrying it, as the reader does.
"""

from __future__ import annotations

import re
from typing import Any

from graphcert.errors import GraphcertError
from graphcert.model import (
    UNREAD_ATTR,
    EdgeData,
    GraphSnapshot,
    NodeKind,
    RawGraph,
    RawNode,
    snapshot_from_raw,
)
from graphcert.model.params import MAX_VALUE_BYTES, PARAM_POINTERS, PARAM_VALUES, encode_param
from graphcert.model.snapshot import RawEdge

MAX_DEPTH = 64  # the collector's (graphread.c): child graphs and bodies nested deeper: refused

# CUstreamBatchMemOpType (cuda.h), named as graphcert.cuda.snapshot names them
MEM_OPS = {1: "wait_value_32", 2: "write_value_32", 3: "flush_remote_writes",
           4: "wait_value_64", 5: "write_value_64", 6: "barrier"}
# CUgraphConditionalNodeType (cuda.h)
COND_TYPES = {0: "if", 1: "while", 2: "switch"}

_CUT = re.compile(r"^([0-9a-f]*)\.\.\.\(\+(\d+) bytes\)$")


class SnapshotProblem(ValueError):
    """The collector's snapshot is not of the documented form (the message says where)."""


def _int(node: dict[str, Any], key: str) -> int:
    value = node.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise SnapshotProblem(f"{key!r} is {value!r}, not an integer")
    return value


def _opt_int(node: dict[str, Any], key: str) -> int | None:
    return None if node.get(key) is None else _int(node, key)


def _ints(value: object, key: str, length: int | None = None) -> list[int]:
    if (not isinstance(value, list)
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in value)
            or (length is not None and len(value) != length)):
        raise SnapshotProblem(f"{key!r} is {value!r}, not a list of "
                              f"{length or 'some'} integers")
    return list(value)


def _opt_ints(node: dict[str, Any], key: str, length: int | None = None) -> list[int] | None:
    value = node.get(key)
    return None if value is None else _ints(value, key, length)


def param_value(text: object) -> int | str:
    """One parameter as graphcert's reader stores it (encode_param) from the collector's
    lowercase hex: whole bytes, or the first MAX_VALUE_BYTES and "...(+N bytes)" as the
    reader itself cuts them."""
    if not isinstance(text, str):
        raise SnapshotProblem(f"parameter {text!r} is not a hex string")
    cut = _CUT.match(text)
    if cut is not None:
        head, more = cut.group(1), int(cut.group(2))
        if len(head) != 2 * MAX_VALUE_BYTES or more <= 0:
            raise SnapshotProblem(f"parameter cut {text[-40:]!r} is not "
                                  f"{MAX_VALUE_BYTES} bytes and a positive rest")
        return f"hex:{head}...(+{more} bytes)"
    try:
        return encode_param(bytes.fromhex(text))
    except ValueError:
        raise SnapshotProblem(f"parameter {text[:40]!r} is not lowercase hex") from None


def _kernel(node: dict[str, Any]) -> dict[str, Any]:
    name = node.get("name")
    if name is not None and not isinstance(name, str):
        raise SnapshotProblem(f"kernel name {name!r} is not a string")
    cooperative = _opt_int(node, "cooperative")
    attrs: dict[str, Any] = {
        "name": name,
        "grid": _ints(node.get("grid"), "grid", 3),
        "block": _ints(node.get("block"), "block", 3),
        "shared_mem_bytes": _int(node, "smem"),
        "param_sizes": _opt_ints(node, "param_sizes"),
        "cooperative": None if cooperative is None else bool(cooperative),
        "cluster_dim": _opt_ints(node, "cluster", 3),
        "priority": _opt_int(node, "priority"),
    }
    params = node.get("params")
    if params is None:
        why = node.get("params_unread")
        attrs[UNREAD_ATTR] = {PARAM_VALUES: why if isinstance(why, str)
                              else "the collector gave no reason"}
        return attrs
    if not isinstance(params, list):
        raise SnapshotProblem(f"'params' is {type(params).__name__}, not a list")
    pointers = node.get("pointers") or []
    if not isinstance(pointers, list):
        raise SnapshotProblem("'pointers' is not a list")
    attrs[PARAM_VALUES] = [param_value(p) for p in params]
    attrs[PARAM_POINTERS] = [_ints(p, "pointers entry") for p in pointers]
    if any(len(p) not in (3, 5) for p in attrs[PARAM_POINTERS]):
        raise SnapshotProblem("a 'pointers' entry is neither 3 nor 5 integers")
    return attrs


def _memcpy(node: dict[str, Any]) -> dict[str, Any]:
    src, dst = node.get("src"), node.get("dst")
    if src not in ("H", "D") or dst not in ("H", "D"):
        raise SnapshotProblem(f"memcpy sides {src!r}, {dst!r} are not 'H' or 'D'")
    width, height, depth = _int(node, "width"), _int(node, "height"), _int(node, "depth")
    return {"direction": f"{src}to{dst}", "width_bytes": width, "height": height,
            "depth": depth, "bytes": width * max(height, 1) * max(depth, 1)}


def _memset(node: dict[str, Any]) -> dict[str, Any]:
    element, width, height = (_int(node, "element_size"), _int(node, "width"),
                              _int(node, "height"))
    return {"element_size": element, "width": width, "height": height,
            "value": _int(node, "value"), "bytes": element * width * height}


def _cond_type(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return COND_TYPES.get(value)
    if isinstance(value, str):
        return value.lower().removeprefix("cu_graph_cond_type_")
    raise SnapshotProblem(f"cond_type {value!r} is neither a number nor a name")


def _conditional(node: dict[str, Any], depth: int
                 ) -> tuple[dict[str, Any], tuple[RawGraph, ...]]:
    ctype, size = _cond_type(node.get("cond_type")), _opt_int(node, "size")
    bodies = node.get("bodies")
    if bodies is None:
        # as graphcert's reader gives a conditional it could not read: what is missing is
        # None, each with the reason under `unread`
        why = node.get("unread")
        why = why if isinstance(why, str) else "the collector gave no reason"
        missing = {k: why for k, v in (("type", ctype), ("size", size)) if v is None}
        return {"type": ctype, "size": size, "bodies_read": None,
                UNREAD_ATTR: missing or {"bodies": why}}, ()
    if not isinstance(bodies, list):
        raise SnapshotProblem("'bodies' is not a list")
    return ({"type": ctype, "size": size if size is not None else len(bodies),
             "bodies_read": "driver"}, tuple(raw_graph(b, depth + 1) for b in bodies))


def _node(index: int, node: object, depth: int) -> RawNode:
    if not isinstance(node, dict):
        raise SnapshotProblem(f"node {index} is not an object")
    number = _int(node, "type")
    kind = NodeKind.from_driver_type(number)
    attrs: dict[str, Any] = {}
    children: tuple[RawGraph, ...] = ()
    if kind is NodeKind.KERNEL:
        attrs = _kernel(node)
    elif kind is NodeKind.MEMCPY:
        attrs = _memcpy(node)
    elif kind is NodeKind.MEMSET:
        attrs = _memset(node)
    elif kind is NodeKind.GRAPH:
        children = (raw_graph(node.get("child"), depth + 1),)
    elif kind in (NodeKind.EXT_SEMAS_SIGNAL, NodeKind.EXT_SEMAS_WAIT):
        attrs = {"count": _int(node, "count")}
    elif kind is NodeKind.MEM_ALLOC:
        attrs = {"bytes": _int(node, "bytes")}
    elif kind is NodeKind.BATCH_MEM_OP:
        ops = _ints(node.get("ops", []), "ops")
        attrs = {"count": _int(node, "count"), "ops": [MEM_OPS.get(op, "unknown") for op in ops]}
    elif kind is NodeKind.CONDITIONAL:
        attrs, children = _conditional(node, depth)
    elif kind is NodeKind.UNKNOWN:
        attrs = {"driver_type": number}
    return RawNode(index, kind, attrs, children)


def _edge(edge: object, count: int) -> RawEdge:
    values = _ints(edge, "edge")
    if len(values) not in (2, 5) or not all(0 <= v < count for v in values[:2]):
        raise SnapshotProblem(f"edge {values} is not [from, to, type, from_port, to_port] "
                              f"over {count} nodes")
    if len(values) == 2:
        return (values[0], values[1])
    return (values[0], values[1], EdgeData(values[2], values[3], values[4]))


def raw_graph(doc: object, depth: int = 0) -> RawGraph:
    """The RawGraph of one collector snapshot ({"nodes": [...], "edges": [...]});
    SnapshotProblem when it is not of that form."""
    if depth > MAX_DEPTH:
        raise SnapshotProblem(f"graphs nested more than {MAX_DEPTH} deep")
    if not isinstance(doc, dict):
        raise SnapshotProblem("a graph is not an object")
    nodes, edges = doc.get("nodes"), doc.get("edges", [])
    if not isinstance(nodes, list) or not isinstance(edges, list):
        raise SnapshotProblem("'nodes' or 'edges' is not a list")
    return RawGraph(tuple(_node(i, n, depth) for i, n in enumerate(nodes)),
                    tuple(_edge(e, len(nodes)) for e in edges))


def snapshot_of(doc: object) -> tuple[GraphSnapshot | None, str | None]:
    """(the snapshot, None), or (None, why) when the collector's snapshot cannot be read."""
    try:
        return snapshot_from_raw(raw_graph(doc), meta={"source": "record"}), None
    except SnapshotProblem as exc:
        return None, f"the collector's snapshot is malformed: {exc}"[:300]
    except GraphcertError as exc:
        return None, f"the collector's snapshot is not a graph: {exc.message}"[:300]


__all__ = ["COND_TYPES", "MEM_OPS", "SnapshotProblem", "param_value", "raw_graph",
           "snapshot_of"]
