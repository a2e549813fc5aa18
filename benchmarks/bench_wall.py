"""Wall time of `graphcert bench` as a user runs it, and how its figures ended (issue 30).
Runs on a GPU.

Each command runs as a user would (a new process, every default unless given), from one
or more source trees, so one call times the code before and after a change on the same GPU:

    PYTHONPATH=. python3 benchmarks/bench_wall.py --tree before=/tmp/before --tree after=. \
        chain 'examples/steps/torch_decode.py:DECODE --classes vllm:16'

prints, per tree and command, the wall seconds, the figures (timings) that ended on their
target, on their timeout or otherwise, and the number of buckets.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any


def _endings(doc: Any) -> Iterator[str]:
    """Every timing's `ended` in a bench --json document ("unknown" where it says none)."""
    if isinstance(doc, dict):
        if "median_s" in doc and "samples" in doc:
            yield str(doc.get("ended", "unknown"))
            return
        for value in doc.values():
            yield from _endings(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from _endings(value)


def run(tree: str, spec: str, extra_path: str, limit_s: float) -> tuple[float, Counter[str], int]:
    """(wall seconds, endings, exit code) of one bench command from one tree."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (tree, extra_path) if p))
    argv = [sys.executable, "-m", "graphcert", "bench", *shlex.split(spec), "--no-certificate",
            "--json"]
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True,
                          timeout=limit_s, check=False)
    wall = time.perf_counter() - t0
    try:
        endings = Counter(_endings(json.loads(done.stdout)))
    except json.JSONDecodeError:
        endings = Counter()
        print(f"  (no JSON: {done.stderr.strip().splitlines()[-1:]})", flush=True)
    return wall, endings, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commands", nargs="+", help="bench arguments, one string each")
    parser.add_argument("--tree", action="append", default=[],
                        help="LABEL=DIR: a source tree to run from (default: this one)")
    parser.add_argument("--path", default=os.environ.get("GRAPHCERT_EXTRA_PATH", ""),
                        help="more PYTHONPATH (e.g. wheels installed with --target)")
    parser.add_argument("--limit", type=float, default=400.0, help="seconds per command")
    args = parser.parse_args()
    trees = [t.split("=", 1) for t in args.tree] or [["this", "."]]
    for label, tree in trees:
        for spec in args.commands:
            wall, endings, code = run(os.path.abspath(tree), spec, args.path, args.limit)
            total = sum(endings.values())
            on_target = endings["precision_target"] + endings["noise_target"]
            print(f"bench_wall {label}: graphcert bench {spec}: {wall:.1f} s wall, exit {code}; "
                  f"{on_target}/{total} figures on target, {endings['timeout']} on timeout "
                  f"{dict(endings)}", flush=True)


if __name__ == "__main__":
    main()
