"""Node kinds and the classification of node attributes. Pure: no CUDA import.

Every attribute a snapshot reader records is one of three classes:

- **topology**: what `cuGraphExecUpdate` cannot change (the kind, a kernel's function,
  a memcpy's direction, a conditional's type). Hashed into both fingerprints.
- **shape**: launch geometry and byte counts. Hashed into the shape fingerprint only.
- **value**: recorded for people, never hashed (a memset's fill value, any key this
  version does not know). Parameter values change per size by design, so hashing them
  would make every size of a capacity class look different.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

AttrClass = Literal["topology", "shape", "value"]


class NodeKind(str, Enum):
    """The 14 CUDA graph node kinds; the value is a stable lowercase name used in JSON."""

    KERNEL = "kernel"
    MEMCPY = "memcpy"
    MEMSET = "memset"
    HOST = "host"
    GRAPH = "graph"  # a child graph
    EMPTY = "empty"
    EVENT_WAIT = "event_wait"
    EVENT_RECORD = "event_record"
    EXT_SEMAS_SIGNAL = "ext_semas_signal"
    EXT_SEMAS_WAIT = "ext_semas_wait"
    MEM_ALLOC = "mem_alloc"
    MEM_FREE = "mem_free"
    BATCH_MEM_OP = "batch_mem_op"
    CONDITIONAL = "conditional"
    UNKNOWN = "unknown"  # a driver type number newer than this list; attrs carry driver_type

    @classmethod
    def from_driver_type(cls, t: int) -> NodeKind:
        """Map a CUgraphNodeType number (0..13) to a kind; anything else is UNKNOWN."""
        try:
            number = int(t)  # also a CUgraphNodeType member or a numpy integer
        except (TypeError, ValueError):
            return cls.UNKNOWN
        if 0 <= number < len(_DRIVER_ORDER):
            return _DRIVER_ORDER[number]
        return cls.UNKNOWN


# CUgraphNodeType numbering: CU_GRAPH_NODE_TYPE_KERNEL = 0 ... CONDITIONAL = 13.
_DRIVER_ORDER: tuple[NodeKind, ...] = (
    NodeKind.KERNEL,
    NodeKind.MEMCPY,
    NodeKind.MEMSET,
    NodeKind.HOST,
    NodeKind.GRAPH,
    NodeKind.EMPTY,
    NodeKind.EVENT_WAIT,
    NodeKind.EVENT_RECORD,
    NodeKind.EXT_SEMAS_SIGNAL,
    NodeKind.EXT_SEMAS_WAIT,
    NodeKind.MEM_ALLOC,
    NodeKind.MEM_FREE,
    NodeKind.BATCH_MEM_OP,
    NodeKind.CONDITIONAL,
)

_K = NodeKind

TOPOLOGY_ATTRS: dict[NodeKind, frozenset[str]] = {
    _K.KERNEL: frozenset({"name"}),
    _K.MEMCPY: frozenset({"direction"}),
    _K.CONDITIONAL: frozenset({"type"}),
    # An unknown kind's driver number is its identity: two different unknown kinds
    # must not hash alike.
    _K.UNKNOWN: frozenset({"driver_type"}),
}
"""Attribute keys that are part of a node's identity, per kind."""

SHAPE_ATTRS: dict[NodeKind, frozenset[str]] = {
    _K.KERNEL: frozenset(
        {
            "grid",
            "block",
            "shared_mem_bytes",
            "param_sizes",
            "cooperative",
            "cluster_dim",
            "priority",
        }
    ),
    _K.MEMSET: frozenset({"element_size", "width", "height", "bytes"}),
    _K.MEMCPY: frozenset({"width_bytes", "height", "depth", "bytes"}),
    _K.MEM_ALLOC: frozenset({"bytes"}),
    _K.CONDITIONAL: frozenset({"size"}),
    _K.BATCH_MEM_OP: frozenset({"count"}),
    _K.EXT_SEMAS_SIGNAL: frozenset({"count"}),
    _K.EXT_SEMAS_WAIT: frozenset({"count"}),
}
"""Attribute keys that are launch shape or byte counts, per kind."""

VALUE_ATTRS: dict[NodeKind, frozenset[str]] = {
    _K.MEMSET: frozenset({"value"}),
}
"""Attribute keys known to be values (never hashed). Unknown keys are values too."""


def attr_class(kind: NodeKind, key: str) -> AttrClass:
    """The class of attribute `key` on a node of `kind`: topology, shape or value."""
    if key in TOPOLOGY_ATTRS.get(kind, frozenset()):
        return "topology"
    if key in SHAPE_ATTRS.get(kind, frozenset()):
        return "shape"
    return "value"


__all__ = [
    "SHAPE_ATTRS",
    "TOPOLOGY_ATTRS",
    "VALUE_ATTRS",
    "AttrClass",
    "NodeKind",
    "attr_class",
]
