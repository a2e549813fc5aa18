"""A profile's figures from joined records: per node, per replay, the critical path and the
gaps on dependent edges. Pure (numpy).

Only complete replays (every timed node has its record) are analysed, so each replay's span,
offsets and gaps are of the same nodes; the incomplete ones are counted. Figures are medians
over replays, in nanoseconds. The sum of node times is the sum of the nodes' medians, so the
shares add up to 1 and parallelism = sum / median span (1 for a chain run back to back).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphcert.errors import InputError
from graphcert.model import NodeKind
from graphcert.profile.join import Joined
from graphcert.profile.records import ProfileGraph, UntimedNode


@dataclass(frozen=True)
class NodeFigures:
    """One timed node's device duration over replays, its median start offset from the
    replay's first start, and its share of the sum of node medians."""

    index: int
    kind: NodeKind
    name: str | None
    median_ns: float
    min_ns: int
    max_ns: int
    start_offset_ns: float
    share: float


@dataclass(frozen=True)
class EdgeGap:
    """Median time from a node's end to its dependent's start (the launch latency inside the
    graph; negative where the dependent starts early, as programmatic launches may).
    through_untimed: the dependency runs through untimed nodes (empty, event, ...)."""

    from_index: int
    to_index: int
    median_ns: float
    through_untimed: bool = False


@dataclass(frozen=True)
class Profile:
    """What one profile of a graph found; see the module's docstring for the definitions."""

    nodes: tuple[NodeFigures, ...]
    untimed: tuple[UntimedNode, ...]
    gaps: tuple[EdgeGap, ...]
    critical_path: tuple[int, ...]  # canonical indices, source to sink (untimed ones too)
    critical_path_ns: float  # sum of the node medians along it
    span_ns: float  # median over replays of first start to last end
    sum_ns: float  # sum of the node medians
    parallelism: float  # sum_ns / span_ns
    replays: int  # complete replays analysed
    incomplete_replays: int
    unmatched: int  # records that joined no node
    duplicates: int
    dropped: int

    def to_json(self) -> dict[str, Any]:
        return {
            "nodes": [{"index": n.index, "kind": n.kind.value, "name": n.name,
                       "median_ns": n.median_ns, "min_ns": n.min_ns, "max_ns": n.max_ns,
                       "start_offset_ns": n.start_offset_ns, "share": n.share}
                      for n in self.nodes],
            "untimed": [u.to_json() for u in self.untimed],
            "gaps": [{"from": g.from_index, "to": g.to_index, "median_ns": g.median_ns,
                      "through_untimed": g.through_untimed} for g in self.gaps],
            "critical_path": list(self.critical_path),
            "critical_path_ns": self.critical_path_ns, "span_ns": self.span_ns,
            "sum_ns": self.sum_ns, "parallelism": self.parallelism, "replays": self.replays,
            "incomplete_replays": self.incomplete_replays, "unmatched": self.unmatched,
            "duplicates": self.duplicates, "dropped": self.dropped,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Profile:
        """The profile a `to_json` document holds; a document of another shape is an
        InputError naming the first thing wrong."""
        try:
            return cls(
                tuple(NodeFigures(int(n["index"]), NodeKind(n["kind"]), _name(n["name"]),
                                  float(n["median_ns"]), int(n["min_ns"]), int(n["max_ns"]),
                                  float(n["start_offset_ns"]), float(n["share"]))
                      for n in doc["nodes"]),
                tuple(UntimedNode(int(u["index"]), NodeKind(u["kind"]), str(u["reason"]))
                      for u in doc["untimed"]),
                tuple(EdgeGap(int(g["from"]), int(g["to"]), float(g["median_ns"]),
                              bool(g["through_untimed"])) for g in doc["gaps"]),
                tuple(int(i) for i in doc["critical_path"]),
                float(doc["critical_path_ns"]), float(doc["span_ns"]), float(doc["sum_ns"]),
                float(doc["parallelism"]), int(doc["replays"]), int(doc["incomplete_replays"]),
                int(doc["unmatched"]), int(doc["duplicates"]), int(doc["dropped"]))
        except KeyError as exc:
            raise InputError(f"profile JSON lacks {exc.args[0]!r}",
                             hint="pass a document Profile.to_json wrote") from None
        except (TypeError, ValueError) as exc:
            raise InputError(f"profile JSON has a bad value: {exc}",
                             hint="pass a document Profile.to_json wrote") from None


def _name(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"node name {value!r} is not a string")
    return value


def critical_path(graph: ProfileGraph, weight_ns: Sequence[float]) -> tuple[tuple[int, ...], float]:
    """The longest path through the DAG by node weight (weight_ns[i] of node i; 0 for untimed
    nodes) and its length. Ties go to the smaller index, so the answer is deterministic."""
    preds = graph.predecessors()
    best: list[float] = [0.0] * len(graph.nodes)
    back: list[int | None] = [None] * len(graph.nodes)
    for v in graph.topological():
        if preds[v]:
            p = max(preds[v], key=lambda u: (best[u], -u))
            best[v], back[v] = best[p] + weight_ns[v], p
        else:
            best[v] = weight_ns[v]
    end = max(range(len(best)), key=lambda u: (best[u], -u))
    path = [end]
    while (prev := back[path[-1]]) is not None:
        path.append(prev)
    return tuple(reversed(path)), best[end]


def _timed_predecessors(graph: ProfileGraph) -> list[dict[int, bool]]:
    """Per node: its nearest timed predecessors, each with whether the dependency runs through
    untimed nodes (a direct edge wins where there are both)."""
    preds = graph.predecessors()
    out: list[dict[int, bool]] = [{} for _ in graph.nodes]
    for v in graph.topological():
        for p in preds[v]:
            if graph.nodes[p].timed:
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
    nodes = tuple(
        NodeFigures(index, graph.nodes[index].kind, graph.nodes[index].name,
                    float(medians[j]), int(duration[:, j].min()), int(duration[:, j].max()),
                    float(offsets[j]), float(medians[j]) / total if total > 0 else 0.0)
        for j, index in enumerate(joined.timed))
    column = {index: j for j, index in enumerate(joined.timed)}
    gaps = tuple(
        EdgeGap(p, v, float(np.median(start[:, column[v]] - end[:, column[p]])), through)
        for v, found in enumerate(_timed_predecessors(graph)) if v in column
        for p, through in sorted(found.items()))
    weight = [0.0] * len(graph.nodes)
    for j, index in enumerate(joined.timed):
        weight[index] = float(medians[j])
    path, length = critical_path(graph, weight)
    span = float(np.median(spans))
    return Profile(nodes, graph.untimed, gaps, path, length, span, total,
                   total / span if span > 0 else 0.0, int(keep.sum()), int((~keep).sum()),
                   len(joined.unmatched), joined.duplicates, joined.dropped)
