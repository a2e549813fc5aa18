"""The summary benchmarks/spread_vs_nvbench.sh prints: each tool's range between fresh
processes as a share of its median, per path, and whether graphcert's stream range is no
wider than nvbench's. Reads the JSON lines the script collects ({"tool", "stream", "graph"},
µs per kernel or node; graphcert's also carry "stream_placements", the per-placement medians,
from which it shows how far apart the processes would be by other estimators).

    python benchmarks/spread_summary.py FIGURES.jsonl
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any


def spread(values: list[float]) -> float:
    """(max - min) / median."""
    return (max(values) - min(values)) / statistics.median(values)


def summary(rows: list[dict[str, Any]]) -> list[str]:
    """One line per path, then the verdict on the stream path."""
    by_tool: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        tool = by_tool.setdefault(str(row["tool"]), {"stream": [], "graph": []})
        for path in ("stream", "graph"):
            tool[path].append(float(row[path]))
    ours, theirs = by_tool.get("graphcert"), by_tool.get("nvbench")
    if not ours or not theirs or len(ours["stream"]) < 2 or len(theirs["stream"]) < 2:
        return ["need at least two processes of each tool"]
    lines = []
    for path in ("stream", "graph"):
        a, b = ours[path], theirs[path]
        lines.append(f"{path:6} between {len(a)} processes: graphcert {min(a):.4f}-{max(a):.4f} "
                     f"({spread(a):.1%} of its median), nvbench {min(b):.4f}-{max(b):.4f} "
                     f"({spread(b):.1%})")
    lines += _estimators([row for row in rows if row["tool"] == "graphcert"])
    met = spread(ours["stream"]) <= spread(theirs["stream"])
    lines.append(f"stream range no wider than nvbench's: {'yes' if met else 'NO'}")
    return lines


def _estimators(rows: list[dict[str, Any]]) -> list[str]:
    """With each graphcert process's per-placement medians ("stream_placements"), how far
    apart the processes would be had each reported the mean or the lowest of them instead
    of their median: an estimator comparison, never the certified figure."""
    per = [row.get("stream_placements") for row in rows]
    if len(per) < 2 or not all(isinstance(p, list) and len(p) >= 2 for p in per):
        return []
    lines = []
    for name, pick in (("median", statistics.median), ("mean", statistics.fmean),
                       ("lowest", min)):
        lines.append(f"stream, graphcert's processes by the {name} of their {len(per[0])} "
                     f"placements: {spread([pick(p) for p in per]):.1%} apart")
    return lines


def main() -> None:
    rows = [json.loads(line) for line in Path(sys.argv[1]).read_text().splitlines() if line]
    print("\n".join(summary(rows)))


if __name__ == "__main__":
    main()
