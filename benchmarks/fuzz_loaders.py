"""Fuzz every loader 10,000 times each (the test tier runs 100): certificate, baseline, snapshot,
policy, workload reference, size and class list, through the CLI runner.

    PYTHONPATH=. python benchmarks/fuzz_loaders.py [EXAMPLES]

Prints each loader's example count, time and outcome; exits 1 when any loader gave a
traceback or a wrong exit code (pytest's output then shows the falsifying input).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOADERS = ("certificate", "baseline", "snapshot", "policy", "workload_reference", "size",
           "class_list")


def main() -> int:
    examples = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    env = {**os.environ, "GRAPHCERT_FUZZ_EXAMPLES": str(examples),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    failed = 0
    print(f"{'loader':<20} {'examples':>9} {'seconds':>9}  outcome")
    for loader in LOADERS:
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             f"tests/cli/test_fuzz_loaders.py::test_fuzz_{loader}"],
            cwd=ROOT, env=env, capture_output=True, text=True)
        took = time.perf_counter() - start
        outcome = "ok" if proc.returncode == 0 else "FAILED"
        print(f"{loader:<20} {examples:>9} {took:>9.1f}  {outcome}", flush=True)
        if proc.returncode != 0:
            failed += 1
            print(proc.stdout[-4000:], proc.stderr[-2000:], sep="\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
