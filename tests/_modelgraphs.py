"""Synthetic graph builders the model tests share (kernel names k_*): nothing imitates a GPU."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from graphcert.model import NodeKind, RawGraph, RawNode

K = NodeKind


def kern(i: int, name: str, grid: int = 1, block: int = 256, **extra: Any) -> RawNode:
    attrs = {"name": name, "grid": [grid, 1, 1], "block": [block, 1, 1],
             "shared_mem_bytes": 0, "param_sizes": [8, 4]}
    attrs.update(extra)
    return RawNode(i, K.KERNEL, attrs)


def memset(i: int, value: int = 0, width: int = 256) -> RawNode:
    return RawNode(i, K.MEMSET, {"element_size": 4, "width": width, "height": 1,
                                 "value": value, "bytes": 4 * width})


def chain(*nodes: RawNode) -> RawGraph:
    return RawGraph(tuple(nodes), tuple((a.id, b.id) for a, b in pairwise(nodes)))


def fork(grid_b: int = 1, grid_c: int = 2, name_b: str = "k_b", name_c: str = "k_c",
         child_grid: int = 1) -> RawGraph:
    """memset -> k_a -> {k_x -> name_b, k_x -> name_c} -> child graph (k_child)."""
    child = chain(kern(1, "k_child", child_grid), kern(2, "k_child2"))
    nodes = (memset(0), kern(1, "k_a", 4), kern(2, "k_x", grid_b), kern(3, "k_x", grid_c),
             kern(4, name_b), kern(5, name_c), RawNode(6, K.GRAPH, {}, (child,)))
    edges = ((0, 1), (1, 2), (1, 3), (2, 4), (3, 5), (4, 6), (5, 6))
    return RawGraph(nodes, edges)
