"""How long wide fan-outs take to fingerprint, and large snapshots to diff, on the CPU.

Synthetic graphs (kernel names k_*), built in code; no GPU. Fingerprint: median of
`snapshot_from_raw` (canonical labelling, order, both hashes) after one warm-up, for 1,000-,
4,000- and 10,000-wide fan-outs (one kernel feeding that many alike), a 10,000-wide fan-out
with four leaf kernels, a 10,000-wide fan-in, a 10,000-wide star inside a chain and 3 x
10,000 x 3 bipartite fan-in/fan-out; target (issue 28) <= 1 s each. Diff: median of
`diff_snapshots` for two 1e5-node snapshots whose topology differs (nodes inserted, removed
and renamed far apart), two of the same topology (grids changed), 4e4- and 1e5-node chains
with every 50th kernel renamed (more edits than the edit-script search looks for; was
asserted < 2 s at 4e4 in a test, ~0.5 s on a quiet machine), two 1e5-node graphs of
wide fans (one leaf more), and 1e5 against 1e6 nodes; target <= 5 s each (2e4 with edits
far apart 1 s, 4e4 renamed every 50th 2 s), with the peak
Python memory the diff allocated (tracemalloc, a separate run) and the time to print it as
`graphcert diff` does (table, then summary; one run). Printed, not asserted.

    python benchmarks/fanout_speed.py [--repeat 3] [--only TEXT] [--no-million]
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from _graphs import (  # noqa: E402  (shared with the tests)
    bipartite_fan_edges,
    fan_in_chain_edges,
    fan_in_edges,
    fan_out_edges,
)
from _timing import median_s  # noqa: E402
from rich.console import Console  # noqa: E402

from graphcert.model import (  # noqa: E402
    GraphSnapshot,
    NodeKind,
    RawGraph,
    RawNode,
    diff_snapshots,
    snapshot_from_raw,
)
from graphcert.render.diff import render_diff  # noqa: E402

NAMES = ("k_attn", "k_mlp", "k_norm", "k_copy")


def kernel(i: int, name: str, grid: int = 4) -> RawNode:
    # What the reader records for a kernel node, every field present.
    return RawNode(i, NodeKind.KERNEL, {
        "name": name, "grid": [grid, 1, 1], "block": [256, 1, 1], "shared_mem_bytes": 0,
        "param_sizes": [8, 8, 4], "cooperative": False, "cluster_dim": [0, 0, 0],
        "priority": 0})


def labelled(n: int, edges: list[tuple[int, int]], leaf_names: int = 1) -> RawGraph:
    """Node 0 and the last node k_hub / k_join, the rest cycling through leaf_names names."""
    names = ["k_hub"] + [f"k_leaf{i % leaf_names}" for i in range(1, n)]
    return RawGraph(tuple(kernel(i, names[i]) for i in range(n)), tuple(edges))


def layered(n: int, renamed: int = -1, removed: int = -1, inserted: int = -1,
            grid: int = 4, every: int = 0) -> RawGraph:
    """A chain of n kernels cycling through NAMES; optionally node `renamed` (and every
    `every`-th) renamed, `removed` taken out and a kernel inserted before `inserted`."""
    nodes = [kernel(i, "k_renamed" if i == renamed or (every and i % every == 1)
                    else NAMES[i % 4], grid) for i in range(n) if i != removed]
    if inserted >= 0:
        nodes.insert(inserted, kernel(n, "k_inserted", grid))
    ids = [node.id for node in nodes]
    return RawGraph(tuple(nodes), tuple(zip(ids, ids[1:], strict=False)))


def fans(hubs: int, width: int, extra: int = 0) -> RawGraph:
    """`hubs` kernels in a chain, each feeding `width` copies (the first one `extra` more)."""
    nodes, edges, nxt = [], [], hubs
    for h in range(hubs):
        nodes.append(kernel(h, "k_layer"))
        if h:
            edges.append((h - 1, h))
        for _ in range(width + (extra if h == 0 else 0)):
            nodes.append(kernel(nxt, "k_copy"))
            edges.append((h, nxt))
            nxt += 1
    return RawGraph(tuple(nodes), tuple(edges))


def fingerprint_cases() -> list[tuple[str, Callable[[], RawGraph]]]:
    return [
        ("fan-out 1,000 wide", lambda: labelled(*fan_out_edges(1_000))),
        ("fan-out 4,000 wide", lambda: labelled(*fan_out_edges(4_000))),
        ("fan-out 10,000 wide", lambda: labelled(*fan_out_edges(10_000))),
        ("fan-out 10,000, 4 leaf kernels", lambda: labelled(*fan_out_edges(10_000), 4)),
        ("fan-in 10,000 wide", lambda: labelled(*fan_in_edges(10_000))),
        ("star 10,000 in a chain", lambda: labelled(*fan_in_chain_edges(100, 10_000))),
        ("bipartite 3 x 10,000 x 3", lambda: labelled(*bipartite_fan_edges(3, 10_000, 3))),
    ]


def diff_cases(million: bool
               ) -> list[tuple[str, Callable[[], tuple[RawGraph, RawGraph]], float]]:
    """(name, the two graphs, target seconds for diff_snapshots)."""
    n = 100_000
    cases = [
        # 2e4 and 4e4: the sizes tests once timed (2e4 < 1 s and 4e4 < 2 s)
        ("2e4 vs 2e4, topology differs",
         lambda: (layered(20_000), layered(20_000, renamed=4_001, removed=10_002,
                                           inserted=16_003)), 1.0),
        ("1e5 vs 1e5, topology differs",
         lambda: (layered(n), layered(n, renamed=20_011, removed=50_002, inserted=80_003)),
         5.0),
        ("1e5 vs 1e5, same topology", lambda: (layered(n), layered(n, grid=8)), 5.0),
        # more edits than the edit-script search looks for: left-overs paired by name
        ("4e4 vs 4e4, every 50th renamed",
         lambda: (layered(40_000), layered(40_000, every=50)), 2.0),
        ("1e5 vs 1e5, every 50th renamed", lambda: (layered(n), layered(n, every=50)), 5.0),
        ("1e5 of fans vs one leaf more", lambda: (fans(10, 9_999), fans(10, 9_999, 1)), 5.0),
    ]
    if million:
        cases.append(("1e5 vs 1e6 nodes", lambda: (layered(n), layered(10 * n)), 5.0))
    return cases


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import igraph
    return (f"{model}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"python-igraph {igraph.__version__}, {platform.system()} {platform.release()}, "
            f"load average {os.getloadavg()[0]:.1f} at the start")


def verdict(seconds: float, target: float) -> str:
    return f"{seconds:8.3f} s  (target {target:g} s, {'ok' if seconds <= target else 'OVER'})"


def peak_mib(fn: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="run the cases whose name holds TEXT")
    parser.add_argument("--no-million", action="store_true", help="skip 1e5 vs 1e6")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"fingerprint (snapshot_from_raw), median of {args.repeat} after a warm-up:")
    for name, build in fingerprint_cases():
        if args.only in name:
            raw = build()
            snapshot_from_raw(raw)  # warm-up: imports, first igraph call
            t = median_s(lambda raw=raw: snapshot_from_raw(raw), args.repeat)
            print(f"  {name:<32} {len(raw.nodes):>9,} nodes {verdict(t, 1.0)}")
    print(f"diff (diff_snapshots), median of {args.repeat}; peak allocation in a separate run:")
    for name, build_pair, target in diff_cases(not args.no_million):
        if args.only in name:
            ra, rb = build_pair()
            a: GraphSnapshot = snapshot_from_raw(ra)
            b: GraphSnapshot = snapshot_from_raw(rb)
            del ra, rb
            t = median_s(lambda a=a, b=b: diff_snapshots(a, b), args.repeat)
            d = diff_snapshots(a, b)
            mib = peak_mib(lambda a=a, b=b: diff_snapshots(a, b))
            console = Console(width=160, color_system=None, file=io.StringIO())
            shown = median_s(lambda d=d, c=console: render_diff(c, d), 1)
            print(f"  {name:<32} {verdict(t, target)}  peak {mib:,.0f} MiB; {d.summary()}: "
                  f"{len(d.removed)} removed, {len(d.added)} added, {len(d.changed)} changed;"
                  f" printed as `graphcert diff` does in {shown:.2f} s")


if __name__ == "__main__":
    main()
