"""Typed result of capture: one class's snapshot, DOT and what capturing it cost. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphcert.jsontypes import JSONObject

if TYPE_CHECKING:
    from graphcert.model import GraphSnapshot


@dataclass(frozen=True)
class CaptureResult:
    """One class captured: its snapshot, the driver's DOT, and the costs."""

    capacity: int
    n: int
    snapshot: GraphSnapshot
    dot: str
    capture_s: float
    instantiate_s: float
    upload_s: float
    free_delta_bytes: int
    graph_memory: Mapping[str, int]
    files: tuple[str, ...] = ()  # what `graphcert capture` wrote for this class

    @property
    def nodes(self) -> int:
        return self.snapshot.node_count

    def to_json(self) -> JSONObject:
        """The class's row in `graphcert capture --json`."""
        return {"capacity": self.capacity, "n": self.n, "capture_s": self.capture_s,
                "instantiate_s": self.instantiate_s, "upload_s": self.upload_s,
                "device_memory_bytes": self.free_delta_bytes,
                "graph_memory": dict(self.graph_memory), "nodes": self.snapshot.node_count,
                "topology_hash": self.snapshot.topology_hash,
                "shape_hash": self.snapshot.shape_hash, "files": list(self.files)}
