"""Cold start of `graphcert --help` (and `gate --help`): heavy imports must stay deferred.

    python benchmarks/cli_startup.py   # prints the median of 15 fresh processes each
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

COMMANDS = (["--help"], ["gate", "--help"], ["inventory", "--help"])


def main() -> None:
    for args in COMMANDS:
        times = []
        for _ in range(15):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "graphcert", *args], check=True,
                           stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t0)
        print(f"graphcert {' '.join(args):16} median {statistics.median(times) * 1e3:6.1f} ms"
              f"  (min {min(times) * 1e3:.1f}, max {max(times) * 1e3:.1f}; target < 300 ms)")


if __name__ == "__main__":
    main()
