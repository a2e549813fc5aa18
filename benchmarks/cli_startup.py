"""Cold start of `graphcert --help` (target <= 50 ms) and of `gate --help` and
`inventory --help` (no target: as fast as they get). Heavy imports must stay deferred.

    python benchmarks/cli_startup.py   # prints the median of 15 fresh processes each

Printed, not asserted. Whether Python writes bytecode is printed too: with
PYTHONDONTWRITEBYTECODE set, every graphcert module is compiled again in every process.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

COMMANDS: tuple[tuple[list[str], float | None], ...] = (
    (["--help"], 0.050), (["gate", "--help"], None), (["inventory", "--help"], None))


def main() -> None:
    bytecode = "off (PYTHONDONTWRITEBYTECODE)" if sys.flags.dont_write_bytecode else "on"
    print(f"python {sys.version.split()[0]}, bytecode cache {bytecode}")
    for args, target in COMMANDS:
        times = []
        for _ in range(15):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "graphcert", *args], check=True,
                           stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t0)
        median = statistics.median(times)
        verdict = ("no target" if target is None else
                   f"{'within' if median <= target else 'OVER'} target {target * 1e3:.0f} ms")
        print(f"graphcert {' '.join(args):16} median {median * 1e3:6.1f} ms"
              f"  (min {min(times) * 1e3:.1f}, max {max(times) * 1e3:.1f}; {verdict})")


if __name__ == "__main__":
    main()
