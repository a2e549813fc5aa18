"""Repeatability: two `graphcert bench` runs back to back; prints how far every median
device time moved (target: within 2%).

    python benchmarks/repeatability.py [WORKLOAD ...]   # default: chain
"""

from __future__ import annotations

import json
import subprocess
import sys


def run(ref: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "graphcert", "bench", ref, "--size", "1",
                           "--no-certificate", "--json"],
                          capture_output=True, text=True, check=True)
    (doc,) = json.loads(proc.stdout)["runs"]
    return doc["results"]["sizes"][0]


def main() -> None:
    refs = sys.argv[1:] or ["chain"]
    worst = 0.0
    for ref in refs:
        first, second = run(ref), run(ref)
        for way in ("stream", "graph"):
            for q in ("device", "host_enqueue", "end_to_end"):
                a, b = first[way][q], second[way][q]
                if a is None or b is None:
                    print(f"{ref:10} {way:6} {q:12} unavailable")
                    continue
                change = b["median_s"] / a["median_s"] - 1
                if q == "device":
                    worst = max(worst, abs(change))
                print(f"{ref:10} {way:6} {q:12} {a['median_s'] * 1e6:10.3f} µs -> "
                      f"{b['median_s'] * 1e6:10.3f} µs  ({change:+.2%})")
    print(f"largest change of a median device time: {worst:.2%} (target within 2%)")


if __name__ == "__main__":
    main()
