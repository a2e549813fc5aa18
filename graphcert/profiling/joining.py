"""Activity records joined to the nodes of a graph, grouped per replay. Pure.

A replay is one launch of the graph. Records are grouped by their `correlation_id`: CUPTI
gives every activity record of a graph launch's nodes the correlation id of the launch call
(cuGraphLaunch), so one id is one replay whatever the nodes' overlap; time windows would split
or merge replays when launches overlap on several streams. Replays are ordered by their first
start. A record joins the node whose id is its `graph_node_id`'s low 32 bits; what cannot join
is kept as an `Unmatched` with its reason, and the caller's count of records CUPTI dropped
(buffers full) travels with the result.

A conditional node's body runs as a graph of its own: its kernels' records name no node of the
top level (on an H100, converge's WHILE body left 18 records a replay, 6 rounds of 3 kernels,
that joined no node; the body's own instance in the high 32 bits, or node ids of its own).
Where the graph has exactly one conditional node and no child graph (so every record of
another instance can only be the body's) and the body left records in every replay, the
conditional node is timed as one aggregate: per replay from its body's first start to its last
end, with the number of body records per replay (iterations times the body's timed nodes).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from graphcert.errors import InputError
from graphcert.model import NodeKind
from graphcert.profiling.records import ActivityRecord, GraphNode, ProfileGraph, UntimedNode

Matrix = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Unmatched:
    """A record that joined no node, with why."""

    record: ActivityRecord
    reason: str


@dataclass(frozen=True, eq=False)
class Joined:
    """Records per replay and timed node. Row r is replay r (launch `launches[r]`), column j
    the timed node `timed[j]` (a canonical index); `present[r, j]` says whether that node has
    a record in that replay, `start_ns`/`end_ns` hold it (0 where absent)."""

    graph: ProfileGraph
    timed: tuple[int, ...]
    launches: tuple[int, ...]
    start_ns: Matrix
    end_ns: Matrix
    present: npt.NDArray[np.bool_]
    unmatched: tuple[Unmatched, ...]
    duplicates: int  # records of a node already timed in the same replay (the first is kept)
    dropped: int  # records CUPTI reported dropped, as the caller passed it
    # per aggregate node (a conditional timed by its body's records): the body records it
    # had in each replay, in the order of `launches`
    body_records: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    @property
    def untimed(self) -> tuple[UntimedNode, ...]:
        return tuple(u for u in self.graph.untimed if u.index not in self.body_records)

    @property
    def missing(self) -> tuple[tuple[int, int], ...]:
        """(launch, canonical index) of every timed node without a record in a replay."""
        rows, cols = np.nonzero(~self.present)
        return tuple((self.launches[r], self.timed[c]) for r, c in zip(rows, cols, strict=True))

    @property
    def complete(self) -> npt.NDArray[np.bool_]:
        """Per replay: every timed node has its record."""
        return np.asarray(self.present.all(axis=1))


def join(records: Iterable[ActivityRecord], graph: ProfileGraph, *, dropped: int = 0,
         graph_instance: int | None = None) -> Joined:
    """Join records to the graph's nodes, one row per replay (launch).

    graph_instance: the high 32 bits of the profiled graph's records, where the caller knows
    them; records of another instance are then unmatched. dropped: CUPTI's count of dropped
    records (it is reported, never guessed)."""
    if isinstance(dropped, bool) or not isinstance(dropped, int) or dropped < 0:
        raise InputError(f"dropped record count {dropped!r} is not a count",
                         hint="pass CUPTI's dropped-record count, an integer >= 0")
    by_id = {node.node_id: node for node in graph.nodes}
    column = {index: j for j, index in enumerate(graph.timed)}
    unmatched: list[Unmatched] = []
    rows: dict[int, dict[int, ActivityRecord]] = {}
    duplicates = 0
    for rec in records:
        reason = _why_not(rec, by_id, graph_instance)
        if reason is not None:
            unmatched.append(Unmatched(rec, reason))
            continue
        row = rows.setdefault(rec.correlation_id, {})
        j = column[by_id[rec.node_id].index]
        if j in row:
            duplicates += 1
        else:
            row[j] = rec
    if not rows:
        raise InputError(f"no record joined a node of the graph ({len(unmatched)} unmatched, "
                         f"{dropped} dropped): no replay to analyse",
                         hint="replay the graph at least once with kernel, memcpy and memset "
                              "activity on and graph trace off")
    launches = sorted(rows, key=lambda k: (min(r.start_ns for r in rows[k].values()), k))
    body, bodies, unmatched = _body(graph, launches, rows, unmatched)
    timed = tuple(sorted((*graph.timed, *bodies)))
    shape = (len(launches), len(timed))
    start = np.zeros(shape, dtype=np.int64)
    end = np.zeros(shape, dtype=np.int64)
    present = np.zeros(shape, dtype=np.bool_)
    where = {index: j for j, index in enumerate(timed)}
    for r, launch in enumerate(launches):
        for j, rec in rows[launch].items():
            k = where[graph.timed[j]]
            start[r, k], end[r, k], present[r, k] = rec.start_ns, rec.end_ns, True
        for index, per_launch in body.items():
            recs = per_launch[launch]
            k = where[index]
            start[r, k] = min(x.start_ns for x in recs)
            end[r, k] = max(x.end_ns for x in recs)
            present[r, k] = True
    return Joined(graph, timed, tuple(launches), start, end, present, tuple(unmatched),
                  duplicates, dropped,
                  {i: tuple(len(body[i][launch]) for launch in launches) for i in bodies})


NESTED_REASON = "of graph instance"  # _why_not's words for a record of another instance
NOT_IN_GRAPH = "is not in the graph"  # ... and for one of a node the top level lacks


def _body(graph: ProfileGraph, launches: Sequence[int],
          rows: Mapping[int, Mapping[int, ActivityRecord]], unmatched: list[Unmatched]
          ) -> tuple[dict[int, dict[int, list[ActivityRecord]]], tuple[int, ...],
                     list[Unmatched]]:
    """The records of the graph's one conditional node's body, per launch (see the module's
    docstring), and the unmatched records left. A body record is one of another instance or
    of a node id the top level lacks; it goes to its launch by correlation id, else (a
    device-side launch) to the last replay that began before it."""
    conditional = [n.index for n in graph.nodes if n.kind is NodeKind.CONDITIONAL]
    if len(conditional) != 1 or any(n.kind is NodeKind.GRAPH for n in graph.nodes):
        return {}, (), unmatched
    firsts = sorted((min(r.start_ns for r in rows[k].values()), k) for k in launches)
    starts = [t for t, _ in firsts]
    per_launch: dict[int, list[ActivityRecord]] = {k: [] for k in launches}
    left: list[Unmatched] = []
    for u in unmatched:
        launch = None
        if u.reason.startswith(NESTED_REASON) or u.reason.endswith(NOT_IN_GRAPH):
            if u.record.correlation_id in per_launch:
                launch = u.record.correlation_id
            else:
                at = bisect.bisect_right(starts, u.record.start_ns)
                launch = firsts[at - 1][1] if at else None
        if launch is None:
            left.append(u)
        else:
            per_launch[launch].append(u.record)
    if not all(per_launch.values()):  # not in every replay: the node stays untimed
        return {}, (), unmatched
    return {conditional[0]: per_launch}, (conditional[0],), left


def _why_not(rec: ActivityRecord, by_id: dict[int, GraphNode],
             graph_instance: int | None) -> str | None:
    """Why a record cannot join a node of the graph, or None when it can."""
    if graph_instance is not None and rec.graph_instance != graph_instance:
        return f"{NESTED_REASON} {rec.graph_instance}, not {graph_instance}"
    node = by_id.get(rec.node_id)
    if node is None:
        return f"node id {rec.node_id} {NOT_IN_GRAPH}"
    if rec.kind != node.kind:
        return f"a {rec.kind.value} record for node {node.index}, a {node.kind.value} node"
    if rec.end_ns < rec.start_ns:
        return f"ends ({rec.end_ns} ns) before it starts ({rec.start_ns} ns)"
    return None
