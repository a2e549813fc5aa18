"""The inputs of a profile: timed activity records (`ActivityRecord`: one node's run in one
launch) and the graph they belong to (`ProfileGraph`). Pure: no CUDA, no CUPTI.

`ProfileGraph` carries what the
analysis needs of a snapshot plus each node's id, which a snapshot does not keep (`RawNode.id`
is local to one read), so `graph_of` takes the ids as an explicit list in canonical order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphcert.errors import InputError
from graphcert.jsontypes import JSONObject
from graphcert.model import GraphSnapshot, NodeKind, NodeRecord

NODE_ID_BITS = 32
NODE_ID_MASK = (1 << NODE_ID_BITS) - 1
"""CUPTI's graph_node_id: the low 32 bits name the node within its template graph, the high
32 bits the graph instance (measured on an H100, CUDA 13.0)."""

TIMED_KINDS = frozenset({NodeKind.KERNEL, NodeKind.MEMCPY, NodeKind.MEMSET})
"""Node kinds CUPTI's CONCURRENT_KERNEL, MEMCPY and MEMSET activity kinds time."""

UNTIMED_REASONS: dict[NodeKind, str] = {
    NodeKind.HOST: "a host node runs on the CPU; CUPTI gives it no device record",
    NodeKind.GRAPH: "a child graph is timed by the records of its own nodes, not as one node",
    NodeKind.EMPTY: "an empty node does no work",
    NodeKind.EVENT_WAIT: "an event wait has no activity record",
    NodeKind.EVENT_RECORD: "an event record has no activity record",
    NodeKind.EXT_SEMAS_SIGNAL: "an external semaphore signal has no activity record",
    NodeKind.EXT_SEMAS_WAIT: "an external semaphore wait has no activity record",
    NodeKind.MEM_ALLOC: "a memory allocation has no activity record",
    NodeKind.MEM_FREE: "a memory free has no activity record",
    NodeKind.BATCH_MEM_OP: "a batch memory operation has no activity record",
    NodeKind.CONDITIONAL: "a conditional node is timed by its body's records only where it is "
                          "the graph's one conditional node, with no child graph, and its body "
                          "left records in every replay",
    NodeKind.UNKNOWN: "a node kind newer than graphcert knows",
}
assert set(UNTIMED_REASONS) | TIMED_KINDS == set(NodeKind)  # every kind has its answer


@dataclass(frozen=True)
class ActivityRecord:
    """One timed activity record: a node's run in one launch of the graph.

    graph_node_id: CUPTI's 64-bit id (low 32 bits: the node, high 32 bits: the graph
    instance); correlation_id: the launch (cuGraphLaunch) the record belongs to, the same for
    every node of one launch; kind: kernel, memcpy or memset; name: the kernel's name (the
    copy's or set's kind otherwise)."""

    graph_node_id: int
    start_ns: int
    end_ns: int
    kind: NodeKind
    name: str
    correlation_id: int
    stream_id: int = 0

    @property
    def node_id(self) -> int:
        """The node's id within its graph (the low 32 bits)."""
        return self.graph_node_id & NODE_ID_MASK

    @property
    def graph_instance(self) -> int:
        """The graph instance the record's node belongs to (the high 32 bits)."""
        return self.graph_node_id >> NODE_ID_BITS


@dataclass(frozen=True)
class GraphNode:
    """One node of the profiled graph at its canonical index, with its id (low 32 bits)."""

    index: int
    node_id: int
    kind: NodeKind
    name: str | None = None

    @property
    def timed(self) -> bool:
        return self.kind in TIMED_KINDS


@dataclass(frozen=True)
class UntimedNode:
    """A node the profile cannot time, with why."""

    index: int
    kind: NodeKind
    reason: str

    def to_json(self) -> JSONObject:
        return {"index": self.index, "kind": self.kind.value, "reason": self.reason}


@dataclass(frozen=True)
class ProfileGraph:
    """The graph a profile is of: nodes in canonical order (node i at index i) and edges as
    (from index, to index). Checked when made: ids unique and within 32 bits, edges in range,
    no cycle, at least one timed node."""

    nodes: tuple[GraphNode, ...]
    edges: tuple[tuple[int, int], ...]

    def __post_init__(self) -> None:
        _check(self)

    @property
    def timed(self) -> tuple[int, ...]:
        """Canonical indices of the nodes CUPTI times, ascending."""
        return tuple(n.index for n in self.nodes if n.timed)

    @property
    def untimed(self) -> tuple[UntimedNode, ...]:
        return tuple(UntimedNode(n.index, n.kind, UNTIMED_REASONS[n.kind])
                     for n in self.nodes if not n.timed)

    def predecessors(self) -> tuple[tuple[int, ...], ...]:
        """Each node's direct predecessors, ascending."""
        preds: list[set[int]] = [set() for _ in self.nodes]
        for a, b in self.edges:
            preds[b].add(a)
        return tuple(tuple(sorted(p)) for p in preds)

    def topological(self) -> tuple[int, ...]:
        """Node indices in an order where every edge goes forward (Kahn's algorithm,
        smallest ready index first, so the order is deterministic)."""
        order = _kahn(len(self.nodes), self.edges)
        assert order is not None  # __post_init__ refused a cycle
        return order


def _kahn(n: int, edges: Sequence[tuple[int, int]]) -> tuple[int, ...] | None:
    import heapq

    indegree = [0] * n
    succs: list[list[int]] = [[] for _ in range(n)]
    for a, b in set(edges):
        indegree[b] += 1
        succs[a].append(b)
    ready = [i for i in range(n) if indegree[i] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        v = heapq.heappop(ready)
        order.append(v)
        for w in succs[v]:
            indegree[w] -= 1
            if indegree[w] == 0:
                heapq.heappush(ready, w)
    return tuple(order) if len(order) == n else None


def _check(graph: ProfileGraph) -> None:
    n = len(graph.nodes)
    for i, node in enumerate(graph.nodes):
        if node.index != i:
            raise InputError(f"graph node {i} says index {node.index}",
                             hint="list the nodes in canonical order, node i at index i")
        if not 0 <= node.node_id <= NODE_ID_MASK:
            raise InputError(f"graph node {i} has id {node.node_id}, not a 32-bit node id",
                             hint="pass the low 32 bits of the node's id")
    ids = [node.node_id for node in graph.nodes]
    if len(set(ids)) != n:
        dup = next(x for x in ids if ids.count(x) > 1)
        raise InputError(f"node id {dup} names more than one graph node",
                         hint="pass each node's own id")
    for a, b in graph.edges:
        if not (0 <= a < n and 0 <= b < n) or a == b:
            raise InputError(f"edge ({a}, {b}) does not join two nodes of a {n}-node graph",
                             hint="edges are (from index, to index) of distinct nodes")
    if _kahn(n, graph.edges) is None:
        raise InputError("the graph's edges form a cycle", hint="a CUDA graph is a DAG")
    if not any(node.timed for node in graph.nodes):
        raise InputError("the graph has no timed node (kernel, memcpy or memset) to profile",
                         hint="profile a graph with at least one kernel, memcpy or memset node")


def graph_of(snapshot: GraphSnapshot, node_ids: Sequence[int]) -> ProfileGraph:
    """The profiled graph of a snapshot; node_ids[i] is the id (low 32 bits) of canonical node
    i, since a snapshot does not keep node ids. Nodes of child graphs are not included."""
    if len(node_ids) != snapshot.node_count:
        raise InputError(f"{len(node_ids)} node id(s) for a {snapshot.node_count}-node graph",
                         hint="pass one id per node, in canonical order")
    nodes = tuple(GraphNode(n.index, node_ids[n.index] & NODE_ID_MASK, n.kind,
                            body_label(n) if n.kind is NodeKind.CONDITIONAL else n.name)
                  for n in snapshot.nodes)
    return ProfileGraph(nodes, tuple(snapshot.edges))


def body_label(node: NodeRecord) -> str:
    """A conditional node's name in a profile: its type and what its bodies hold, e.g.
    "WHILE body (3 kernels)" (the snapshot read its bodies from the driver's DOT print)."""
    kind = str(node.attrs.get("type") or "conditional").upper()
    counts: dict[str, int] = {}
    for body in node.children:
        for k, v in body.counts(recursive=True).items():
            counts[k] = counts.get(k, 0) + v
    timed = {k: v for k, v in counts.items() if NodeKind(k) in TIMED_KINDS}
    what = ", ".join(f"{v} {k}{'s' if v != 1 else ''}" for k, v in timed.items())
    return f"{kind} body ({what or 'no timed node'})"
