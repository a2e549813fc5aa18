"""CUPTI's ids of graph objects: a template node's id (its low 32 bits name the node in the
kernel records of every instantiation, DEVICE_FACTS.md) and a graph's id."""

from __future__ import annotations

from collections.abc import Iterable

from graphcert.cupti.library import load, refusal


def node_id(node: int) -> int:
    """cupti.get_graph_node_id of a CUgraphNode handle (as an int address)."""
    cupti = load()
    try:
        return int(cupti.get_graph_node_id(int(node)))
    except Exception as exc:
        raise refusal("reading a graph node's id", exc) from None


def node_ids(nodes: Iterable[int]) -> tuple[int, ...]:
    """node_id of each handle, in the order given."""
    return tuple(node_id(n) for n in nodes)


def graph_id(graph: int) -> int:
    """cupti.get_graph_id of a CUgraph handle (as an int address)."""
    cupti = load()
    try:
        return int(cupti.get_graph_id(int(graph)))
    except Exception as exc:
        raise refusal("reading a graph's id", exc) from None
