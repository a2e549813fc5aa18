"""verify's words for a shape that differs name a shape attribute, never a parameter's value
(values are outside the shape hash): synthetic snapshots."""

from __future__ import annotations

from graphcert.model import NodeKind, snapshot_from_raw
from graphcert.model.snapshot import RawGraph, RawNode
from graphcert.run.verify import _describe_shape_change


def _kernel(values: list[int], priority: int) -> RawNode:
    return RawNode(0, NodeKind.KERNEL, {
        "name": "k_synthetic", "grid": [1, 1, 1], "block": [32, 1, 1], "shared_mem_bytes": 0,
        "param_sizes": [8, 4], "priority": priority, "param_values": values})


def test_the_shape_change_named_is_the_shape_attribute_not_the_parameter_value() -> None:
    ref = snapshot_from_raw(RawGraph((_kernel([7, 1000], 0),), ()))
    got = snapshot_from_raw(RawGraph((_kernel([7, 1024], 1),), ()))
    words = _describe_shape_change(ref, got, 1024)
    assert words.endswith(": node 0 priority"), words
