"""Activity records joined to the nodes of a graph, grouped per replay. Pure.

A replay is one launch of the graph. Records are grouped by their `correlation_id`: CUPTI
gives every activity record of a graph launch's nodes the correlation id of the launch call
(cuGraphLaunch), so one id is one replay whatever the nodes' overlap; time windows would split
or merge replays when launches overlap on several streams. Replays are ordered by their first
start. A record joins the node whose id is its `graph_node_id`'s low 32 bits; what cannot join
is kept as an `Unmatched` with its reason, and the caller's count of records CUPTI dropped
(buffers full) travels with the result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from graphcert.errors import InputError
from graphcert.profile.records import ActivityRecord, GraphNode, ProfileGraph, UntimedNode

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

    @property
    def untimed(self) -> tuple[UntimedNode, ...]:
        return self.graph.untimed

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
    timed = graph.timed
    column = {index: j for j, index in enumerate(timed)}
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
    shape = (len(launches), len(timed))
    start = np.zeros(shape, dtype=np.int64)
    end = np.zeros(shape, dtype=np.int64)
    present = np.zeros(shape, dtype=np.bool_)
    for r, launch in enumerate(launches):
        for j, rec in rows[launch].items():
            start[r, j], end[r, j], present[r, j] = rec.start_ns, rec.end_ns, True
    return Joined(graph, timed, tuple(launches), start, end, present, tuple(unmatched),
                  duplicates, dropped)


def _why_not(rec: ActivityRecord, by_id: dict[int, GraphNode],
             graph_instance: int | None) -> str | None:
    """Why a record cannot join a node of the graph, or None when it can."""
    if graph_instance is not None and rec.graph_instance != graph_instance:
        return f"of graph instance {rec.graph_instance}, not {graph_instance}"
    node = by_id.get(rec.node_id)
    if node is None:
        return f"node id {rec.node_id} is not in the graph"
    if rec.kind != node.kind:
        return f"a {rec.kind.value} record for node {node.index}, a {node.kind.value} node"
    if rec.end_ns < rec.start_ns:
        return f"ends ({rec.end_ns} ns) before it starts ({rec.start_ns} ns)"
    return None
