"""How fast the exact canonical form and both fingerprints are, on the CPU (no GPU needed).

Synthetic graphs (kernel names k_*), built in code. Medians of 5 (after one warm-up) of
`snapshot_from_raw` (canonical labelling, order, both hashes) and of a fresh
`python -m graphcert inventory FILE` process on a saved 10,000-node snapshot. Targets (issue
13): chain of 10,000 <= 100 ms, chain of 100,000 <= 1 s, 1,023-node reduction tree and
64 x 7 butterfly <= 50 ms each, inventory of 10,000 nodes end to end <= 0.5 s. Printed,
not asserted.

    python benchmarks/fingerprint_speed.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from _graphs import butterfly_edges, reduction_tree_edges  # noqa: E402  (shared with the tests)
from _timing import median_s  # noqa: E402

from graphcert.model import (  # noqa: E402
    NodeKind,
    RawGraph,
    RawNode,
    save_snapshot,
    snapshot_from_raw,
)


def kernel(i: int, name: str) -> RawNode:
    # What the reader records for a kernel node, every field present.
    return RawNode(i, NodeKind.KERNEL, {
        "name": name, "grid": [4, 1, 1], "block": [256, 1, 1], "shared_mem_bytes": 0,
        "param_sizes": [8, 8, 4], "cooperative": False, "cluster_dim": [0, 0, 0],
        "priority": 0})


def chain(n: int) -> RawGraph:
    return RawGraph(tuple(kernel(i, "k_step") for i in range(n)),
                    tuple((i, i + 1) for i in range(n - 1)))


def _labelled(n: int, edges: list[tuple[int, int]], name: str) -> RawGraph:
    return RawGraph(tuple(kernel(i, name) for i in range(n)), tuple(edges))


def reduction_tree(leaves: int) -> RawGraph:
    return _labelled(*reduction_tree_edges(leaves), "k_reduce")


def butterfly(width: int, stages: int) -> RawGraph:
    return _labelled(*butterfly_edges(width, stages), "k_exchange")


def median_of(repeat: int, fn: Callable[[], object]) -> float:
    fn()  # warm-up: imports, first igraph call
    return median_s(fn, repeat)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cases = [("chain of 10,000", chain(10_000), 0.100),
             ("chain of 100,000", chain(100_000), 1.0),
             ("reduction tree of 1,023", reduction_tree(512), 0.050),
             ("butterfly 64 x 7", butterfly(64, 7), 0.050)]
    print(f"canonical form + both fingerprints, median of {args.repeat}:")
    for name, raw, target in cases:
        t = median_of(args.repeat, lambda raw=raw: snapshot_from_raw(raw))
        verdict = "ok" if t <= target else "OVER"
        print(f"  {name:<26} {len(raw.nodes):>7} nodes {t * 1e3:9.1f} ms"
              f"  (target {target * 1e3:.0f} ms, {verdict})")
    with tempfile.TemporaryDirectory() as tmp:
        path = save_snapshot(Path(tmp) / "chain.snapshot.json", snapshot_from_raw(chain(10_000)))
        env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"}
        cmd = [sys.executable, "-m", "graphcert", "inventory", str(path)]

        def inventory() -> None:
            subprocess.run(cmd, env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)

        t = median_of(args.repeat, inventory)
        verdict = "ok" if t <= 0.5 else "OVER"
        print(f"graphcert inventory FILE (10,000 nodes), fresh process: {t * 1e3:.0f} ms"
              f"  (target 500 ms, {verdict})")


if __name__ == "__main__":
    main()
