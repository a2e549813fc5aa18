"""Ctrl-C at random moments of start-up: every SIGINT must give one line and exit 130.

    PYTHONPATH=. python benchmarks/ctrl_c_startup.py [--n 1000] [--jobs 2] [--seed 45]

Runs `graphcert gate reports/` N times in all, alternating between its entry points
(`python -m graphcert`, the installed console script next to this Python when there is one,
else the same call made as that script makes it: `from graphcert.__main__ import main`), and
sends one SIGINT to each at a moment drawn uniformly from 0 to the run's own length (measured
first: the median of 5 uninterrupted runs). Prints per entry point: SIGINTs sent, runs that
ended before their SIGINT, tracebacks, outcomes (exit status and whether stderr was exactly
"graphcert: interrupted"), and the moments of the first tracebacks. Not a test: its moments
are random; tests/cli/test_ctrl_c.py holds the deterministic checks. A run whose SIGINT comes
after it wrote its verdict may end with that verdict's code (the handler no longer runs once
Python is finalising), or, past the point where Python gives SIGINT back to the system, be
ended by the signal itself (-2): neither prints a traceback.

A SIGINT in Python's own start-up, before graphcert's first line runs, is Python's to handle;
such runs are listed apart ("before graphcert") when their traceback names no graphcert file.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LINE = "graphcert: interrupted\n"


def entries() -> dict[str, list[str]]:
    """The entry points, as argv prefixes: -m, and the console script (or its call)."""
    found = {"python -m graphcert": [sys.executable, "-m", "graphcert"]}
    script = Path(sys.executable).with_name("graphcert")
    if script.is_file():
        found["graphcert (script)"] = [sys.executable, str(script)]
    else:
        found["graphcert (script's call)"] = [
            sys.executable, "-c", "import sys; from graphcert.__main__ import main; "
            "sys.argv[0] = 'graphcert'; sys.exit(main())"]
    return found


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}


def run_once(argv: list[str], delay: float | None) -> tuple[int, str, bool]:
    """(exit status, stderr, whether it ended before the SIGINT) of one run."""
    proc = subprocess.Popen(argv, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, errors="replace")
    early = False
    if delay is not None:
        time.sleep(delay)
        early = proc.poll() is not None
        if not early:
            proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err, early


def length_s(argv: list[str]) -> float:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        run_once(argv, None)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="SIGINTs in all")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--args", default="gate reports/")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    points = {name: [*argv, *args.args.split()] for name, argv in entries().items()}
    lengths = {name: length_s(argv) for name, argv in points.items()}
    plan = [(name, rng.uniform(0.0, lengths[name]))
            for i in range(args.n) for name in [list(points)[i % len(points)]]]
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda p: (p[0], p[1], *run_once(points[p[0]], p[1])), plan))
    total_tracebacks = 0
    for name in points:
        mine = [r for r in results if r[0] == name]
        sent = [r for r in mine if not r[4]]
        traced = [r for r in sent if "Traceback" in r[3] or "KeyboardInterrupt" in r[3]]
        python_own = [r for r in traced if "graphcert" not in r[3]]
        total_tracebacks += len(traced)
        outcomes: dict[tuple[int, str], list[tuple[Any, ...]]] = collections.defaultdict(list)
        for r in sent:
            outcomes[(r[2], "one line" if r[3] == LINE else "other stderr")].append(r)
        print(f"{name}: {len(mine)} runs (uninterrupted length {lengths[name] * 1e3:.0f} ms), "
              f"{len(sent)} SIGINTs sent, {len(mine) - len(sent)} ended before their SIGINT")
        print(f"  tracebacks: {len(traced)} ({len(python_own)} before graphcert's first line)")
        for (code, what), runs in sorted(outcomes.items(), key=str):
            moments = sorted(r[1] * 1e3 for r in runs)
            last = runs[0][3].strip().splitlines()[-1:] if runs[0][3].strip() else ["(none)"]
            print(f"  exit {code:4} {what:12} {len(runs):5}  at {moments[0]:.0f}-{moments[-1]:.0f}"
                  f" ms" + ("" if what == "one line" else f"; stderr ends {last[0][:90]!r}"))
        for r in traced[:3]:
            print(f"  at {r[1] * 1e3:.1f} ms: exit {r[2]}: {r[3].strip().splitlines()[-1]!r}")
    print(f"tracebacks over {sum(not r[4] for r in results)} SIGINTs: {total_tracebacks}")
    return 1 if total_tracebacks else 0


if __name__ == "__main__":
    sys.exit(main())
