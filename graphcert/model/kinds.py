"""Node kinds and the one table that says, per kind, what is read, hashed and shown. Pure.

Every attribute a snapshot reader records is one of three classes:

- **topology**: what `cuGraphExecUpdate` cannot change (the kind, a kernel's function,
  a memcpy's direction, a conditional's type). Hashed into both fingerprints.
- **shape**: launch geometry and byte counts. Hashed into the shape fingerprint only.
- **value**: recorded for people, never hashed (a memset's fill value, any key this
  version does not know). Parameter values change per size by design, so hashing them
  would make every size of a capacity class look different.

To add a node kind: a NodeKind member, a KindSpec row in KINDS, a reader in
graphcert/cuda/snapshot.py's READERS, and (if it needs more than its label) a line in
graphcert/render/inventory.py's `operation`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property
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
        return _BY_DRIVER_TYPE.get(number, cls.UNKNOWN)

    @property
    def spec(self) -> KindSpec:
        """This kind's row of the KINDS table."""
        return KINDS[self]


@dataclass(frozen=True)
class KindSpec:
    """One row of the node-kind table.

    driver_type: the CUgraphNodeType number (None for UNKNOWN, which records its own).
    topology / shape / values: attribute keys of each class (see the module docstring);
    a key in none of them is a value. label: what the inventory says the node does when it
    has nothing more specific ({field} is filled from its attrs, "?" when missing).
    name_attr: the attribute that names a node of this kind (a kernel's function), used in
    labels and to align the nodes of two different graphs.
    """

    driver_type: int | None
    label: str
    topology: tuple[str, ...] = ()
    shape: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    name_attr: str | None = None

    @cached_property
    def hashed(self) -> tuple[str, ...]:
        """Keys hashed into the shape fingerprint (topology keys included), sorted."""
        return tuple(sorted(set(self.topology) | set(self.shape)))


_K = NodeKind
_KERNEL_SHAPE = ("grid", "block", "shared_mem_bytes", "param_sizes", "cooperative",
                 "cluster_dim", "priority")

KINDS: dict[NodeKind, KindSpec] = {
    _K.KERNEL: KindSpec(0, "kernel", topology=("name",), shape=_KERNEL_SHAPE,
                        name_attr="name"),
    _K.MEMCPY: KindSpec(1, "memcpy", topology=("direction",),
                        shape=("width_bytes", "height", "depth", "bytes")),
    _K.MEMSET: KindSpec(2, "memset", shape=("element_size", "width", "height", "bytes"),
                        values=("value",)),
    _K.HOST: KindSpec(3, "host function"),
    _K.GRAPH: KindSpec(4, "child graph"),
    _K.EMPTY: KindSpec(5, "empty (dependency only)"),
    _K.EVENT_WAIT: KindSpec(6, "wait for event"),
    _K.EVENT_RECORD: KindSpec(7, "record event"),
    _K.EXT_SEMAS_SIGNAL: KindSpec(8, "signal {count} external semaphores", shape=("count",)),
    _K.EXT_SEMAS_WAIT: KindSpec(9, "wait on {count} external semaphores", shape=("count",)),
    _K.MEM_ALLOC: KindSpec(10, "allocate", shape=("bytes",)),
    _K.MEM_FREE: KindSpec(11, "free"),
    _K.BATCH_MEM_OP: KindSpec(12, "batch of {count} memory ops", shape=("count",)),
    # bodies_read and unread say how a conditional's bodies were read: never hashed.
    _K.CONDITIONAL: KindSpec(13, "conditional", topology=("type",), shape=("size",),
                             values=("bodies_read",)),
    # An unknown kind's driver number is its identity: two different unknown kinds must
    # not hash alike.
    _K.UNKNOWN: KindSpec(None, "unknown node type {driver_type}", topology=("driver_type",)),
}
"""The one table: per kind, its driver type, the fields each fingerprint hashes, its label."""

_BY_DRIVER_TYPE = {s.driver_type: k for k, s in KINDS.items() if s.driver_type is not None}

UNREAD_ATTR = "unread"
"""Attribute (on any kind, a value) mapping a field the reader could not get to the reason,
e.g. {"param_sizes": "not in the driver's DOT print"}: absent, never silently dropped."""

# Derived views, kept for callers that ask per class.
TOPOLOGY_ATTRS: dict[NodeKind, frozenset[str]] = {
    k: frozenset(s.topology) for k, s in KINDS.items() if s.topology}
SHAPE_ATTRS: dict[NodeKind, frozenset[str]] = {
    k: frozenset(s.shape) for k, s in KINDS.items() if s.shape}
VALUE_ATTRS: dict[NodeKind, frozenset[str]] = {
    k: frozenset(s.values) for k, s in KINDS.items() if s.values}


def attr_class(kind: NodeKind, key: str) -> AttrClass:
    """The class of attribute `key` on a node of `kind`: topology, shape or value."""
    spec = KINDS[kind]
    if key in spec.topology:
        return "topology"
    if key in spec.shape:
        return "shape"
    return "value"


__all__ = [
    "KINDS",
    "SHAPE_ATTRS",
    "TOPOLOGY_ATTRS",
    "UNREAD_ATTR",
    "VALUE_ATTRS",
    "AttrClass",
    "KindSpec",
    "NodeKind",
    "attr_class",
]
