"""The pure graph data model: node kinds, snapshots and their fingerprints, JSON, diffs.

No CUDA import anywhere in this package, so `inventory FILE`, `diff` and `gate` run on any
machine. The CUDA reader (graphcert.cuda.snapshot) builds a RawGraph and calls
snapshot_from_raw; everything else works on GraphSnapshot. snapshot_from_raw is also the
documented way to fingerprint a graph given as data (docs/fingerprints.md).
"""

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
