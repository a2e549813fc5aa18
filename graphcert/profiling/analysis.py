"""A profile's figures from joined records: per node, per replay, the critical path and the
gaps on dependent edges. Pure (numpy).

Only complete replays (every timed node has its record) are analysed, so each replay's span,
offsets and gaps are of the same nodes; the incomplete ones are counted. Figures are medians
over replays, in nanoseconds, each node's with the 95% interval of its median over replays
(graphcert.orderstats.median_interval, the one bench uses). The sum of node times is the sum
of the nodes' medians, so the shares add up to 1 and parallelism = sum / median span (1 for
a chain run back to back). A conditional node timed by its body's records (joining.py) is a
node like the others here (its duration: the body's span in the replay), with the median
number of body records per replay. The values and the critical path are
graphcert.profiling.figures.
"""

from __future__ import annotations

import numpy as np

from graphcert.errors import InputError
from graphcert.orderstats import median_interval
from graphcert.profiling.figures import EdgeGap, NodeFigures, Profile, critical_path
from graphcert.profiling.joining import Joined
from graphcert.profiling.records import ProfileGraph


def _timed_predecessors(graph: ProfileGraph, timed: frozenset[int]) -> list[dict[int, bool]]:
    """Per node: its nearest timed predecessors (`timed`: canonical indices), each with
    whether the dependency runs through untimed nodes (a direct edge wins where both)."""
    preds = graph.predecessors()
    out: list[dict[int, bool]] = [{} for _ in graph.nodes]
    for v in graph.topological():
        for p in preds[v]:
            if p in timed:
                out[v][p] = False
            else:
                for q in out[p]:
                    out[v].setdefault(q, True)
    return out


def analyse(joined: Joined) -> Profile:
    """The profile of joined records. No complete replay is an InputError naming the fix."""
    graph, keep = joined.graph, joined.complete
    if not keep.any():
        raise InputError(f"none of {len(joined.launches)} replay(s) has a record of every "
                         f"timed node ({len(joined.missing)} missing, {joined.dropped} dropped)",
                         hint="replay again with larger CUPTI buffers, or check that graph "
                              "trace is off")
    start, end = joined.start_ns[keep], joined.end_ns[keep]
    duration = end - start
    first = start.min(axis=1, keepdims=True)
    spans = end.max(axis=1) - first[:, 0]
    medians = np.median(duration, axis=0)
    offsets = np.median(start - first, axis=0)
    total = float(medians.sum())
    bounds = [median_interval(duration[:, j]) for j in range(len(joined.timed))]
    body = {i: float(np.median(np.asarray(counts)[keep]))
            for i, counts in joined.body_records.items()}
    nodes = tuple(
        NodeFigures(index, graph.nodes[index].kind, graph.nodes[index].name,
                    float(medians[j]), int(duration[:, j].min()), int(duration[:, j].max()),
                    float(offsets[j]), float(medians[j]) / total if total > 0 else 0.0,
                    bounds[j][0], bounds[j][2], body.get(index))
        for j, index in enumerate(joined.timed))
    column = {index: j for j, index in enumerate(joined.timed)}
    gaps = tuple(
        EdgeGap(p, v, float(np.median(start[:, column[v]] - end[:, column[p]])), through)
        for v, found in enumerate(_timed_predecessors(graph, frozenset(column)))
        if v in column
        for p, through in sorted(found.items()))
    weight = [0.0] * len(graph.nodes)
    for j, index in enumerate(joined.timed):
        weight[index] = float(medians[j])
    path, length = critical_path(graph, weight)
    span = float(np.median(spans))
    return Profile(nodes, joined.untimed, gaps, path, length, span, total,
                   total / span if span > 0 else 0.0, int(keep.sum()), int((~keep).sum()),
                   len(joined.unmatched), joined.duplicates, joined.dropped,
                   tuple(sorted(set(graph.edges))))
