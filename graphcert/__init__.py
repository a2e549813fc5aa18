"""graphcert: profile and certify CUDA Graphs.

The public Python API; importing graphcert imports nothing heavy (each function imports what
it needs when called):

    import graphcert
    snap = graphcert.snapshot(g)                 # torch CUDAGraph(keep_graph=True), CuPy Graph,
                                                 # cuda.core GraphBuilder, CUgraph or address
    graphcert.save(snap, "decode-b8.json")
    d = graphcert.diff(graphcert.load("decode-b8.json"), snap)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    from pathlib import Path

    from graphcert.model import GraphSnapshot, SnapshotDiff

from graphcert._version import __version__

__all__ = ["__version__", "diff", "load", "save", "snapshot"]

PathLike = Union[str, "os.PathLike[str]"]


def snapshot(obj: Any, name: str | None = None) -> GraphSnapshot:
    """Read a CUDA graph made elsewhere into a GraphSnapshot (nodes, edges, fingerprints).

    Takes a `torch.cuda.CUDAGraph` created with `keep_graph=True` (after capture), a
    `cupy.cuda.Graph`, a cuda.core `GraphBuilder` (after `end_building()`) or
    `GraphDefinition`, a cuda.bindings `CUgraph`, or a CUgraph address as an int. The graph is
    read, never changed. `name` is kept in the snapshot's meta. Anything else raises
    `graphcert.errors.InputError` with one line naming its type and the types taken."""
    from graphcert.sources import snapshot_of

    return snapshot_of(obj, name=name)


def save(snapshot: GraphSnapshot, path: PathLike) -> Path:
    """Write a snapshot as JSON, atomically; returns the path written."""
    from graphcert.model import save_snapshot

    return save_snapshot(path, snapshot)


def load(path: PathLike) -> GraphSnapshot:
    """Read and verify a snapshot file (fingerprints are recomputed); InputError if unusable."""
    from graphcert.model import load_snapshot

    return load_snapshot(path)


def diff(a: GraphSnapshot | PathLike, b: GraphSnapshot | PathLike) -> SnapshotDiff:
    """What changed from a to b: nodes added, removed and changed, and whether the topology
    or only the launch shape differs. Each side is a snapshot or a snapshot file's path."""
    from graphcert.model import diff_snapshots

    return diff_snapshots(_as_snapshot(a), _as_snapshot(b))


def _as_snapshot(value: GraphSnapshot | PathLike) -> GraphSnapshot:
    if isinstance(value, (str, os.PathLike)):
        return load(value)
    return value
