"""Inventory plus fingerprint of a 10,000-node graph (`chain`), on a GPU.

Times reading the live graph into a snapshot (every node, every edge, both fingerprints) and
rendering the inventory table; prints the figures (target: under 0.5 s together).

    python benchmarks/inventory_speed.py [--kernels 10000]
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402

from graphcert.cuda.context import RunContext  # noqa: E402
from graphcert.cuda.snapshot import read_raw  # noqa: E402
from graphcert.cuda.stream import Stream  # noqa: E402
from graphcert.model import snapshot_from_raw  # noqa: E402
from graphcert.render.inventory import inventory_table  # noqa: E402
from graphcert.run.session import WorkloadSession  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", type=int, default=10_000)
    args = parser.parse_args()
    with RunContext.open(0) as ctx, Stream() as stream:
        session = WorkloadSession(ctx, f"chain[kernels={args.kernels}]")
        session.prepare(1)
        graph = session.record_graph(stream, 1)
        for attempt in range(3):
            t0 = time.perf_counter()
            raw, _ = read_raw(graph.handle)
            t1 = time.perf_counter()
            snap = snapshot_from_raw(raw)
            t2 = time.perf_counter()
            console = Console(file=io.StringIO(), width=160, color_system=None)
            console.print(inventory_table(snap))
            t3 = time.perf_counter()
            print(f"run {attempt}: {snap.node_count} nodes, {len(snap.edges)} edges: read "
                  f"{(t1 - t0) * 1e3:.1f} ms, canonical order + fingerprints "
                  f"{(t2 - t1) * 1e3:.1f} ms, table {(t3 - t2) * 1e3:.1f} ms, "
                  f"inventory + fingerprint {(t2 - t0) * 1e3:.1f} ms (target < 500 ms)")
        graph.destroy()
        session.release()


if __name__ == "__main__":
    main()
