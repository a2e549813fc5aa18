"""Inside a replayed graph (issue 31): activity records joined to the graph's nodes, and
per node and per replay figures, the critical path and the gaps on dependent edges. Pure:
numpy and the standard library, no CUDA, no CUPTI (graphcert.cupti will make the records).

- `records`: a timed activity record (`ActivityRecord`), the profiled graph (`ProfileGraph`, from
  a snapshot and its node ids with `graph_of`), the untimed kinds and why;
- `join`: records to nodes, one row per replay (launch), with what did not join (`Joined`);
- `analysis`: the figures (`Profile`, with `to_json`/`from_json`) and `critical_path`.
"""

from graphcert.profile.analysis import EdgeGap, NodeFigures, Profile, analyse, critical_path
from graphcert.profile.join import Joined, Unmatched, join
from graphcert.profile.records import (
    TIMED_KINDS,
    ActivityRecord,
    GraphNode,
    ProfileGraph,
    UntimedNode,
    graph_of,
)

__all__ = ["TIMED_KINDS", "EdgeGap", "GraphNode", "Joined", "NodeFigures", "ActivityRecord",
           "Profile", "ProfileGraph", "Unmatched", "UntimedNode", "analyse", "critical_path",
           "graph_of", "join"]
