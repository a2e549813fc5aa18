"""Device probe (issue 32): what `graphcert record` costs a process at its start and end,
apart from the program's own steps. Prints the wall of each command (median of 3, each in a
fresh process) and the slowest imports of a recorded empty program; asserts nothing.

    PYTHONPATH=.:/tmp/site:/tmp/cupti python3 tools/probes/record_fixed_cost_probe.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = sys.executable
TORCH = "import torch; torch.zeros(1, device='cuda'); torch.cuda.synchronize()"
# graphcert record runs a script or a module (not `python -c`): the programs as files
HERE = Path(tempfile.mkdtemp())
EMPTY, TORCH_START = HERE / "empty.py", HERE / "torch_start.py"
EMPTY.write_text("pass\n")
TORCH_START.write_text(TORCH + "\n")
CASES = [
    ("python -c pass", [PY, "-c", "pass"]),
    ("import graphcert.cli", [PY, "-c", "import graphcert.cli"]),
    ("import graphcert.run.record", [PY, "-c", "import graphcert.run.record"]),
    ("cupti loaded", [PY, "-c", "from graphcert.cupti.library import load; load()"]),
    ("import igraph", [PY, "-c", "import igraph"]),
    ("import igraph, matplotlib hidden",
     [PY, "-c", "import sys; sys.modules['matplotlib'] = None; import igraph"]),
    ("cuInit + primary context", [PY, "-c", "from cuda.bindings import driver as d; d.cuInit(0); "
                                  "e, dev = d.cuDeviceGet(0); d.cuDevicePrimaryCtxRetain(dev)"]),
    ("record of an empty script", [PY, "-m", "graphcert", "record", "--no-certificate", "--",
                                   "python", str(EMPTY)]),
    ("torch CUDA start", [PY, "-c", TORCH]),
    ("record of torch CUDA start", [PY, "-m", "graphcert", "record", "--no-certificate", "--",
                                    "python", str(TORCH_START)]),
]


def wall(cmd: list[str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
    return time.perf_counter() - t0, done.returncode


def main() -> None:
    for label, cmd in CASES:
        runs = [wall(cmd) for _ in range(3)]
        print(f"{label:<36} {statistics.median(w for w, _ in runs):6.3f} s  "
              f"(exit {runs[-1][1]})", flush=True)
    done = subprocess.run([PY, "-X", "importtime", "-m", "graphcert", "record",
                           "--no-certificate", "--", "python", str(EMPTY)],
                          capture_output=True, text=True, check=False, timeout=120)
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            parts = [p.strip() for p in line[len("import time:"):].split("|")]
            if parts[1].isdigit():
                rows.append((int(parts[1]), parts[2]))
    print("slowest imports (cumulative us) of a recorded empty program:")
    for us, name in sorted(rows, reverse=True)[:25]:
        print(f"  {us:>9,}  {name}")


if __name__ == "__main__":
    main()
