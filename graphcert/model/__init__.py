"""The pure graph data model: node kinds, snapshots and their fingerprints, JSON, diffs.

No CUDA import anywhere in this package, so `inventory FILE`, `diff` and `gate` run on any
machine. The CUDA reader (graphcert.cuda.snapshot) builds a RawGraph and calls
snapshot_from_raw; everything else works on GraphSnapshot. snapshot_from_raw is also the
documented way to fingerprint a graph given as data (docs/fingerprints.md).
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names below, for readers and type checkers; loaded by __getattr__
    from graphcert.model.diff import (
        ChangeClass,
        ChildDiff,
        FieldChange,
        SnapshotDiff,
        diff_snapshots,
        node_signature,
    )
    from graphcert.model.io import (
        SNAPSHOT_KIND,
        SNAPSHOT_SCHEMA_VERSION,
        load_snapshot,
        save_snapshot,
        snapshot_from_json,
        snapshot_to_json,
    )
    from graphcert.model.kinds import (
        KINDS,
        SHAPE_ATTRS,
        TOPOLOGY_ATTRS,
        UNREAD_ATTR,
        VALUE_ATTRS,
        AttrClass,
        KindSpec,
        NodeKind,
        attr_class,
    )
    from graphcert.model.snapshot import (
        FINGERPRINT_SCHEME,
        EdgeData,
        GraphSnapshot,
        NodeRecord,
        RawGraph,
        RawNode,
        canonical_json,
        snapshot_from_raw,
    )


# Where each name lives, imported on first use (PEP 562): importing one module of the package
# (graphcert.model.jsontext for the certificates' digests, say) no longer loads them all.
_WHERE: dict[str, str] = {
    "ChangeClass": "graphcert.model.diff",
    "ChildDiff": "graphcert.model.diff",
    "FieldChange": "graphcert.model.diff",
    "SnapshotDiff": "graphcert.model.diff",
    "diff_snapshots": "graphcert.model.diff",
    "node_signature": "graphcert.model.diff",
    "SNAPSHOT_KIND": "graphcert.model.io",
    "SNAPSHOT_SCHEMA_VERSION": "graphcert.model.io",
    "load_snapshot": "graphcert.model.io",
    "save_snapshot": "graphcert.model.io",
    "snapshot_from_json": "graphcert.model.io",
    "snapshot_to_json": "graphcert.model.io",
    "KINDS": "graphcert.model.kinds",
    "SHAPE_ATTRS": "graphcert.model.kinds",
    "TOPOLOGY_ATTRS": "graphcert.model.kinds",
    "UNREAD_ATTR": "graphcert.model.kinds",
    "VALUE_ATTRS": "graphcert.model.kinds",
    "AttrClass": "graphcert.model.kinds",
    "KindSpec": "graphcert.model.kinds",
    "NodeKind": "graphcert.model.kinds",
    "attr_class": "graphcert.model.kinds",
    "FINGERPRINT_SCHEME": "graphcert.model.snapshot",
    "EdgeData": "graphcert.model.snapshot",
    "GraphSnapshot": "graphcert.model.snapshot",
    "NodeRecord": "graphcert.model.snapshot",
    "RawGraph": "graphcert.model.snapshot",
    "RawNode": "graphcert.model.snapshot",
    "canonical_json": "graphcert.model.snapshot",
    "snapshot_from_raw": "graphcert.model.snapshot",
}


def __getattr__(name: str) -> object:
    """The package-level name `name`, from the module that defines it."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


__all__ = [
    "FINGERPRINT_SCHEME",
    "KINDS",
    "SHAPE_ATTRS",
    "SNAPSHOT_KIND",
    "SNAPSHOT_SCHEMA_VERSION",
    "TOPOLOGY_ATTRS",
    "UNREAD_ATTR",
    "VALUE_ATTRS",
    "AttrClass",
    "ChangeClass",
    "ChildDiff",
    "EdgeData",
    "FieldChange",
    "GraphSnapshot",
    "KindSpec",
    "NodeKind",
    "NodeRecord",
    "RawGraph",
    "RawNode",
    "SnapshotDiff",
    "attr_class",
    "canonical_json",
    "diff_snapshots",
    "load_snapshot",
    "node_signature",
    "save_snapshot",
    "snapshot_from_json",
    "snapshot_from_raw",
    "snapshot_to_json",
]
