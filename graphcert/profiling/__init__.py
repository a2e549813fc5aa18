"""Inside a replayed graph: activity records joined to the graph's nodes, and
per node and per replay figures, the critical path and the gaps on dependent edges. Pure:
numpy and the standard library, no CUDA, no CUPTI (graphcert.cupti will make the records).

- `records`: a timed activity record (`ActivityRecord`), the profiled graph (`ProfileGraph`, from
  a snapshot and its node ids with `graph_of`), the untimed kinds and why;
- `joining`: `join`, records to nodes, one row per replay (launch), with what did not
  join (`Joined`);
- `figures`: the figures as values (`Profile`, with `to_json`/`from_json`) and `critical_path`
  (no numpy: certificate readers load them);
- `analysis`: `analyse`, the figures of joined records (numpy).

`join` and `analyse` (numpy) load on first use, so reading a profile certificate stays light.
"""

from typing import TYPE_CHECKING

from graphcert.profiling.figures import (
    EdgeGap,
    NodeFigures,
    Profile,
    critical_path,
    longest_path,
)
from graphcert.profiling.records import (
    TIMED_KINDS,
    ActivityRecord,
    GraphNode,
    ProfileGraph,
    UntimedNode,
    graph_of,
)

if TYPE_CHECKING:
    from graphcert.profiling.analysis import analyse
    from graphcert.profiling.joining import Joined, Unmatched, join

_LAZY = {"analyse": "graphcert.profiling.analysis", "join": "graphcert.profiling.joining",
         "Joined": "graphcert.profiling.joining", "Unmatched": "graphcert.profiling.joining"}


def __getattr__(name: str) -> object:
    """The numpy half (`join`, `analyse`), imported when first named."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'graphcert.profiling' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = ["TIMED_KINDS", "EdgeGap", "GraphNode", "Joined", "NodeFigures", "ActivityRecord",
           "Profile", "ProfileGraph", "Unmatched", "UntimedNode", "analyse", "critical_path",
           "graph_of", "join", "longest_path"]
