"""CUPTI's ids of graph objects: a template node's id (its low 32 bits name the node in the
kernel records of every instantiation, DEVICE_FACTS.md), a graph's id and an executable's id."""

from __future__ import annotations

from collections.abc import Iterable

from graphcert.cupti.library import load, refusal


def _ask(call: str, handle: int, what: str) -> int:
    cupti = load()
    try:
        return int(getattr(cupti, call)(int(handle)))
    except Exception as exc:
        raise refusal(f"reading {what}", exc) from None


def node_id(node: int) -> int:
    """cupti.get_graph_node_id of a CUgraphNode handle (as an int address)."""
    return _ask("get_graph_node_id", node, "a graph node's id")


def node_ids(nodes: Iterable[int]) -> tuple[int, ...]:
    """node_id of each handle, in the order given."""
    return tuple(node_id(n) for n in nodes)


def graph_id(graph: int) -> int:
    """cupti.get_graph_id of a CUgraph handle (as an int address)."""
    return _ask("get_graph_id", graph, "a graph's id")


def exec_id(graph_exec: int) -> int:
    """cupti.get_graph_exec_id of a CUgraphExec handle (as an int address): the graph_id of
    its GRAPH_TRACE launch records."""
    return _ask("get_graph_exec_id", graph_exec, "an executable graph's id")
