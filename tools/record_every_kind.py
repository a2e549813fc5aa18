"""Record, on a GPU, the snapshot of a graph holding every node kind graphcert's builder can
make (tests/gpu/all_kinds.py: 12 of CUDA's 14, with nested conditional bodies), and the
driver's DOT print of it, for tests/fixtures/.

    PYTHONPATH=. python3 tools/record_every_kind.py OUTDIR

Writes OUTDIR/every_kind.snapshot.json and OUTDIR/every_kind.dot (copy both to
tests/fixtures/every_kind/). The graph is launched once first and
its effects checked, so what is recorded is a graph that ran. Exit 1 if anything differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cuda.bindings import driver  # noqa: E402

from graphcert.cuda.context import RunContext  # noqa: E402
from graphcert.cuda.snapshot import read_snapshot  # noqa: E402
from graphcert.cuda.stream import Stream  # noqa: E402
from graphcert.model import save_snapshot  # noqa: E402
from tests.gpu.all_kinds import build_all_kinds, expected_effects, run_once  # noqa: E402

KERNELS = ROOT / "tests" / "kernels" / "graphcert_test.cu"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    out = parser.parse_args().outdir
    out.mkdir(parents=True, exist_ok=True)
    ctx = RunContext.open(0)
    stream = Stream()
    g = build_all_kinds(ctx, KERNELS)
    try:
        got = run_once(g, stream)
        if got != expected_effects():
            print(f"effects differ: {got} != {expected_effects()}")
            return 1
        _err, version = driver.cuDriverGetVersion()
        meta = {"name": "every_kind", "gpu": ctx.device.info.name, "driver_version": version,
                "builder": "tests/gpu/all_kinds.py"}
        snap = read_snapshot(g.builder.graph, meta=meta)
        save_snapshot(out / "every_kind.snapshot.json", snap)
        (out / "every_kind.dot").write_text(g.builder.graph.dot())
    finally:
        g.close(ctx)
        stream.destroy()
        ctx.close()
    counts = snap.counts(recursive=True)
    print(f"every_kind: {len(counts)} kinds {counts}")
    print(f"topology {snap.topology_hash} shape {snap.shape_hash}")
    return 0 if len(counts) >= 12 else 1


if __name__ == "__main__":
    sys.exit(main())
