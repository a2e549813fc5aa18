"""graphcert record's overhead (issue 32): examples/record/serve_torch.py run plain and under
`graphcert record --no-certificate`, alternating, in the same call; prints the median of each
(the whole process, and the serving loop's own time as the example prints it) and the ratio.
The issue asks for the recorded run within 5% of the plain one.

    python benchmarks/record_overhead.py [--repeat 3] [-- EXAMPLE ARGS]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "record" / "serve_torch.py"
LOOP = re.compile(r"serve_torch: .* ([0-9.]+) s$", re.MULTILINE)


def once(recorded: bool, extra: list[str]) -> tuple[float, float]:
    """(process wall s, serving loop s) of one run."""
    program = [sys.executable, str(EXAMPLE), *extra]
    cmd = ([sys.executable, "-m", "graphcert", "record", "--no-certificate", "--", *program]
           if recorded else program)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    found = LOOP.search(done.stdout)
    return wall, float(found.group(1)) if found else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("extra", nargs="*", help="arguments for the example")
    args = parser.parse_args()
    runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for _ in range(args.repeat):
        for recorded in (False, True):
            runs[recorded].append(once(recorded, args.extra))
    for what, i in (("process wall", 0), ("serving loop", 1)):
        plain = statistics.median(r[i] for r in runs[False])
        rec = statistics.median(r[i] for r in runs[True])
        print(f"{what}: plain {plain:.3f} s, recorded {rec:.3f} s, ratio {rec / plain:.3f} "
              f"(median of {args.repeat})")


if __name__ == "__main__":
    main()
