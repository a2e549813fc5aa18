"""The certificate mutation fuzz at volume (CI runs 15 per kind, tests/cert/test_mutation_fuzz.py):
recorded certificates of every kind (topology, bench, a sweep made from recorded bench
sizes, and a synthetic plan until one is recorded: tests/_recorded.py), one field replaced
or deleted and the digest resealed, each through gate, show, diff and report in-process.

    PYTHONPATH=. python benchmarks/mutation_fuzz.py --per-kind 10000 [--jobs 8] [--seed 28]

Prints per kind: mutations tried, crashes (a traceback, an exit code other than 0, 1 or 2,
or exit 2 without exactly one line on stderr), exit codes per command, and wall time. Exits
1 when anything crashed, listing the first crashes (kind, certificate, field, mutant,
command).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from _mutations import KINDS, Tally, exit_summary, run  # noqa: E402

for name in ("GITHUB_STEP_SUMMARY", "GRAPHCERT_SIGNING_KEY", "GRAPHCERT_SIGNING_KEY_FILE"):
    os.environ.pop(name, None)
os.environ["NO_COLOR"] = "1"


def _chunk(kind: str, start: int, count: int, seed: int) -> Tally:
    with tempfile.TemporaryDirectory(prefix="graphcert-mutation-") as folder:
        return run(kind, count, seed, Path(folder), start=start)


def fuzz(kind: str, per_kind: int, seed: int, jobs: int) -> Tally:
    """`per_kind` mutations of `kind`, split over `jobs` processes."""
    size = -(-per_kind // jobs)
    starts = range(0, per_kind, size)
    tally = Tally()
    if jobs == 1:
        return _chunk(kind, 0, per_kind, seed)
    with ProcessPoolExecutor(jobs) as pool:
        for part in pool.map(_chunk, [kind] * len(starts), starts,
                             [min(size, per_kind - s) for s in starts], [seed] * len(starts)):
            tally.add(part)
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-kind", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1))
    parser.add_argument("--kinds", default=",".join(KINDS))
    args = parser.parse_args()
    crashed = []
    print(f"{'kind':<9} {'tried':>7} {'crashes':>8} {'seconds':>8}  exit codes per command",
          flush=True)
    for kind in args.kinds.split(","):
        start = time.perf_counter()
        tally = fuzz(kind, args.per_kind, args.seed, max(1, args.jobs))
        took = time.perf_counter() - start
        print(f"{kind:<9} {tally.tried:>7} {len(tally.crashes):>8} {took:>8.1f}  "
              f"{exit_summary(tally)}", flush=True)
        crashed += tally.crashes
    for line in crashed[:40]:
        print(f"CRASH {line}"[:600])
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
