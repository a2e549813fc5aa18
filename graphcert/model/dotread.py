"""Conditional bodies read from the driver's DOT print (cuGraphDebugDotPrint, verbose).

Driver 13.0 has no cuGraphNodeGetParams, so a conditional node's type and body graphs can
only be found in the DOT print. This module parses it: pure text, no driver call (the live
reader, graphcert.cuda.snapshot, prints it). It finds every graph cluster, every node with
every field the DOT shows, nested conditionals and child graphs inside bodies, and the node
handles the driver printed (which the live reader uses to read the rest through the per-kind
readers). Fields a fingerprint hashes that the DOT does not show are listed under the node's
`unread` attr with the reason, never silently dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from graphcert.jsontypes import JSONObject
from graphcert.model.kinds import KINDS, UNREAD_ATTR, NodeKind
from graphcert.model.snapshot import RawGraph, RawNode

NOT_IN_DOT = "not in the driver's DOT print"

# A record node's label is "{...}"; a child-graph node's is plain lines ("0 (topoId: 2)",
# "graph_5", "node handle: 0x..."), so the braces are optional.
_NODE = re.compile(r'"(graph_\d+)_node_(\d+)"\s*\[[^\]]*?label="\s*\{?\s*(.*?)\}?\s*"\];', re.S)
_PLAIN_HANDLE = re.compile(r"node handle:\s*(0x[0-9A-Fa-f]+)")
_CHILD_LINE = re.compile(r"^\s*graph_\d+\s*$", re.M)
_EDGE = re.compile(r'"(graph_\d+)_node_(\d+)"\s*->\s*"(graph_\d+)_node_(\d+)"')
_CLUSTER = re.compile(r'label="(graph_\d+)"')
# {{h1 | h2} | {v1 | v2}}  and  {Extent | {h1 | h2} | {v1 | v2}}
_TABLE = re.compile(r"\{(?:\s*([A-Za-z]\w*)\s*\|)?\s*\{([^{}]*)\}\s*\|\s*\{([^{}]*)\}\s*\}")
_MEMTYPES = re.compile(r"\{([^{}]*MemoryType[^{}]*)\}\s*\|\s*\{([^{}]*)\}")
_PAIR = re.compile(r"\{\s*([A-Za-z][\w ]*?)\s*\|\s*([^{}|]*?)\s*\}")
_LAUNCH = re.compile(r"\|\s*([A-Za-z_][\w:~<>,]*?)\\<\\<\\<([^\\]*)\\>\\>\\>")
_KINDS = {"KERNEL": NodeKind.KERNEL, "MEMSET": NodeKind.MEMSET, "MEMCPY": NodeKind.MEMCPY,
          "HOST": NodeKind.HOST, "EMPTY": NodeKind.EMPTY, "CONDITIONAL": NodeKind.CONDITIONAL,
          "GRAPH": NodeKind.GRAPH, "CHILD_GRAPH": NodeKind.GRAPH,
          "EVENT_RECORD": NodeKind.EVENT_RECORD, "WAIT_EVENT": NodeKind.EVENT_WAIT,
          "EVENT_WAIT": NodeKind.EVENT_WAIT, "MEM_ALLOC": NodeKind.MEM_ALLOC,
          "MEM_FREE": NodeKind.MEM_FREE, "BATCH_MEM_OP": NodeKind.BATCH_MEM_OP,
          "EXT_SEMAS_SIGNAL": NodeKind.EXT_SEMAS_SIGNAL,
          "EXT_SEMAS_WAIT": NodeKind.EXT_SEMAS_WAIT}
_SIDES = {"HOST": "H", "DEVICE": "D", "ARRAY": "D"}


@dataclass(frozen=True)
class DotNode:
    """One node as the DOT shows it; `handle` is the driver's node handle (0 if absent)."""

    index: int
    kind: NodeKind
    attrs: dict[str, Any]
    handle: int
    children: tuple[DotGraph, ...] = ()


@dataclass(frozen=True)
class DotGraph:
    """One graph cluster of the DOT print: its nodes and (from, to) node indices."""

    name: str
    nodes: tuple[DotNode, ...]
    edges: tuple[tuple[int, int], ...]

    def raw(self) -> RawGraph:
        """The RawGraph of what the DOT showed (no driver call)."""
        return RawGraph(tuple(RawNode(n.index, n.kind, n.attrs,
                                      tuple(c.raw() for c in n.children))
                              for n in self.nodes), self.edges)


def fields(label: str) -> dict[str, str]:
    """Every `header | value` the label shows, first occurrence of each header kept."""
    found: dict[str, str] = {}
    for _title, heads, values in _TABLE.findall(label):
        hs = [h.strip() for h in heads.split("|")]
        vs = [v.strip() for v in values.split("|")]
        if len(hs) == len(vs):
            for h, v in zip(hs, vs, strict=True):
                found.setdefault(h, v)
    for key, value in _PAIR.findall(label):
        found.setdefault(key.strip(), value.strip())
    return found


def _int(text: str | None) -> int | None:
    try:
        return int(text, 0) if text is not None else None
    except ValueError:
        return None


def _kernel(label: str, f: dict[str, str]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    launch = _LAUNCH.search(label)
    if launch:
        nums = [int(v) for v in re.findall(r"\d+", launch.group(2))]
        attrs["name"] = launch.group(1)
        if len(nums) == 3:
            attrs.update(grid=[nums[0], 1, 1], block=[nums[1], 1, 1], shared_mem_bytes=nums[2])
        elif len(nums) == 7:
            attrs.update(grid=nums[0:3], block=nums[3:6], shared_mem_bytes=nums[6])
    coop = _int(f.get("cooperative"))
    if coop is not None:
        attrs["cooperative"] = bool(coop)
    priority = _int(f.get("priority"))
    if priority is not None:
        attrs["priority"] = priority
    return attrs


def _memset(f: dict[str, str]) -> dict[str, Any]:
    element, width, height = (_int(f.get(k)) for k in ("elementSize", "width", "height"))
    attrs = {"element_size": element, "width": width, "height": height,
             "value": _int(f.get("value"))}
    if element is not None and width is not None and height is not None:
        attrs["bytes"] = element * width * height
    return {k: v for k, v in attrs.items() if v is not None}


def _memcpy(label: str, f: dict[str, str]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    table = _MEMTYPES.search(label)  # src fields then dst fields, MemoryType first in each
    if table:
        hs = [h.strip() for h in table.group(1).split("|")]
        vs = [v.strip() for v in table.group(2).split("|")]
        kinds = [vs[i].split()[0] for i, h in enumerate(hs)
                 if h == "MemoryType" and i < len(vs) and vs[i]]
        if len(kinds) == 2 and all(k in _SIDES for k in kinds):
            attrs["direction"] = f"{_SIDES[kinds[0]]}to{_SIDES[kinds[1]]}"
    width, height, depth = (_int(f.get(k)) for k in ("WidthInBytes", "Height", "Depth"))
    if width is not None and height is not None and depth is not None:
        attrs.update(width_bytes=width, height=height, depth=depth,
                     bytes=width * max(height, 1) * max(depth, 1))
    return attrs


def _node(label: str, index: int, clusters: dict[str, str], dot: str,
          labels: dict[tuple[str, int], str]) -> DotNode:
    head = label.strip().split("\n", 1)[0].strip().split("|")[0].strip()
    kind = _KINDS.get(head, NodeKind.UNKNOWN)
    if kind is NodeKind.UNKNOWN and _CHILD_LINE.search(label):
        kind = NodeKind.GRAPH  # the driver prints a child-graph node as its graph's name
    f = fields(label)
    attrs: dict[str, Any] = {}
    children: tuple[DotGraph, ...] = ()
    if kind is NodeKind.KERNEL:
        attrs = _kernel(label, f)
    elif kind is NodeKind.MEMSET:
        attrs = _memset(f)
    elif kind is NodeKind.MEMCPY:
        attrs = _memcpy(label, f)
    elif kind in (NodeKind.CONDITIONAL, NodeKind.GRAPH):
        # Bodies (True / False / case numbers) and a child graph name their clusters.
        names = [n for n in re.findall(r"graph_\d+", label) if n in clusters]
        children = tuple(_graph(dot, labels, clusters, n) for n in names)
        if kind is NodeKind.CONDITIONAL:
            ctype = f.get("Conditional Type")
            attrs = {"type": ctype.lower() if ctype else None, "size": len(children),
                     "bodies_read": "dot"}
    elif kind is NodeKind.UNKNOWN:
        attrs = {"driver_type": None}
    spec = KINDS[kind]
    unread = {k: NOT_IN_DOT for k in spec.hashed if attrs.get(k) is None}
    if unread:
        attrs[UNREAD_ATTR] = unread
    plain = _PLAIN_HANDLE.search(label)
    handle = _int(f.get("node handle")) or _int(plain.group(1) if plain else None) or 0
    return DotNode(index, kind, attrs, handle, children)


def _graph(dot: str, labels: dict[tuple[str, int], str], clusters: dict[str, str],
           name: str) -> DotGraph:
    nodes = tuple(_node(label, index, clusters, dot, labels)
                  for (graph, index), label in sorted(labels.items()) if graph == name)
    edges = tuple((int(a), int(b)) for ga, a, gb, b in _EDGE.findall(dot)
                  if ga == name and gb == name)
    return DotGraph(name, nodes, edges)


def parse_dot(dot: str) -> tuple[dict[tuple[str, int], str], dict[str, str]]:
    """({(cluster, node index): label}, {cluster name: cluster name})."""
    labels = {(g, int(i)): body for g, i, body in _NODE.findall(dot)}
    clusters = {name: name for name in _CLUSTER.findall(dot)}
    return labels, clusters


def dot_conditional(dot: str, handle: int) -> tuple[DotNode | None, JSONObject]:
    """The conditional node with driver handle `handle` as the DOT shows it (bodies
    included, recursively), plus its attrs; (None, attrs saying nothing was found) when the
    DOT has no such node."""
    labels, clusters = parse_dot(dot)
    for (_cluster, index), label in labels.items():
        f = fields(label)
        if _int(f.get("node handle")) == handle and "CONDITIONAL" in label.split("|")[0]:
            node = _node(label, index, clusters, dot, labels)
            return node, node.attrs
    return None, {"type": None, "size": None, "bodies_read": None,
                  UNREAD_ATTR: {"type": "node not found in the driver's DOT print",
                                "size": "node not found in the driver's DOT print"}}


__all__ = ["NOT_IN_DOT", "DotGraph", "DotNode", "dot_conditional", "fields", "parse_dot"]
