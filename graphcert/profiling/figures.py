"""A profile's figures as values (`NodeFigures`, `EdgeGap`, `Profile`, with to_json/from_json)
and the critical path by node weight. Pure: the standard library only (no numpy), so the
certificate readers (graphcert.cert) load them light; graphcert.profiling.analysis computes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphcert.errors import InputError
from graphcert.jsontypes import Doc, JSONObject
from graphcert.model import NodeKind
from graphcert.profiling.records import ProfileGraph, UntimedNode, _kahn


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
    low_ns: float  # the 95% interval of the median over replays (graphcert.orderstats)
    high_ns: float
    # a conditional node timed by its body: median body records per replay (iterations times
    # the body's timed nodes); None for a node timed by its own record
    body_records: float | None = None


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
    edges: tuple[tuple[int, int], ...] = ()  # the graph's (from, to) canonical indices

    def to_json(self) -> JSONObject:
        return {
            "nodes": [_node_json(n) for n in self.nodes],
            "untimed": [u.to_json() for u in self.untimed],
            "gaps": [{"from": g.from_index, "to": g.to_index, "median_ns": g.median_ns,
                      "through_untimed": g.through_untimed} for g in self.gaps],
            "critical_path": list(self.critical_path),
            "critical_path_ns": self.critical_path_ns, "span_ns": self.span_ns,
            "sum_ns": self.sum_ns, "parallelism": self.parallelism, "replays": self.replays,
            "incomplete_replays": self.incomplete_replays, "unmatched": self.unmatched,
            "duplicates": self.duplicates, "dropped": self.dropped,
            "edges": [list(e) for e in self.edges],
        }

    @classmethod
    def from_json(cls, doc: Doc) -> Profile:
        """The profile a `to_json` document holds; a document of another shape is an
        InputError naming the first thing wrong."""
        # No schema has checked `doc`: the TypeError or ValueError that int(), float(), a
        # subscript or a loop raises on a value of the wrong shape is the message reported,
        # so the values are read untyped here and typed by those conversions.
        raw: Any = doc
        try:
            return cls(
                tuple(NodeFigures(int(n["index"]), NodeKind(n["kind"]), _name(n["name"]),
                                  float(n["median_ns"]), int(n["min_ns"]), int(n["max_ns"]),
                                  float(n["start_offset_ns"]), float(n["share"]),
                                  float(n["low_ns"]), float(n["high_ns"]),
                                  _optional(n.get("body_records")))
                      for n in raw["nodes"]),
                tuple(UntimedNode(int(u["index"]), NodeKind(u["kind"]), str(u["reason"]))
                      for u in raw["untimed"]),
                tuple(EdgeGap(int(g["from"]), int(g["to"]), float(g["median_ns"]),
                              bool(g["through_untimed"])) for g in raw["gaps"]),
                tuple(int(i) for i in raw["critical_path"]),
                float(raw["critical_path_ns"]), float(raw["span_ns"]), float(raw["sum_ns"]),
                float(raw["parallelism"]), int(raw["replays"]), int(raw["incomplete_replays"]),
                int(raw["unmatched"]), int(raw["duplicates"]), int(raw["dropped"]),
                tuple(_edge(e) for e in raw["edges"]))
        except KeyError as exc:
            raise InputError(f"profile JSON lacks {exc.args[0]!r}",
                             hint="pass a document Profile.to_json wrote") from None
        except (TypeError, ValueError) as exc:
            raise InputError(f"profile JSON has a bad value: {exc}",
                             hint="pass a document Profile.to_json wrote") from None


def _node_json(n: NodeFigures) -> JSONObject:
    doc: JSONObject = {"index": n.index, "kind": n.kind.value, "name": n.name,
                       "median_ns": n.median_ns, "min_ns": n.min_ns, "max_ns": n.max_ns,
                       "start_offset_ns": n.start_offset_ns, "share": n.share,
                       "low_ns": n.low_ns, "high_ns": n.high_ns}
    if n.body_records is not None:  # only a conditional node timed by its body has it
        doc["body_records"] = n.body_records
    return doc


def _optional(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"body_records {value!r} is not a number")
    return float(value)


def _edge(value: object) -> tuple[int, int]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise TypeError(f"edge {value!r} is not a (from, to) pair")
    return int(value[0]), int(value[1])


def _name(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"node name {value!r} is not a string")
    return value


def critical_path(graph: ProfileGraph, weight_ns: Sequence[float]) -> tuple[tuple[int, ...], float]:
    """The longest path through the DAG by node weight (weight_ns[i] of node i; 0 for untimed
    nodes) and its length. Ties go to the smaller index, so the answer is deterministic."""
    return longest_path(len(graph.nodes), graph.edges, weight_ns)


def longest_path(n: int, edges: Sequence[tuple[int, int]], weight_ns: Sequence[float]
                 ) -> tuple[tuple[int, ...], float]:
    """`critical_path` of an n-node DAG given by its edges (what a certificate records); a
    cycle or an edge out of range is an InputError."""
    order = _kahn(n, [(a, b) for a, b in edges if 0 <= a < n and 0 <= b < n])
    if order is None or any(not (0 <= a < n and 0 <= b < n) for a, b in edges):
        raise InputError(f"the edges do not make a DAG of {n} node(s)",
                         hint="edges are (from, to) canonical indices of an acyclic graph")
    preds: list[set[int]] = [set() for _ in range(n)]
    for a, b in edges:
        preds[b].add(a)
    best: list[float] = [0.0] * n
    back: list[int | None] = [None] * n
    for v in order:
        if preds[v]:
            p = max(preds[v], key=lambda u: (best[u], -u))
            best[v], back[v] = best[p] + weight_ns[v], p
        else:
            best[v] = weight_ns[v]
    end = max(range(n), key=lambda u: (best[u], -u))
    path = [end]
    while (prev := back[path[-1]]) is not None:
        path.append(prev)
    return tuple(reversed(path)), best[end]
