"""Probe (issue 32): where `graphcert record`'s whole-process time goes for the serve_torch
example (17.2 s recorded against 5.7 s plain at 93ab9a1, the serving loop itself no slower).
Prints the wall of: the plain example; torch's CUDA start alone; graphcert record of a program
that never touches CUDA (graphcert's fixed cost); the recorded example under cProfile (its
top functions by cumulative time, so the extra seconds are named); and the recorded example
with CUDA_MODULE_LOADING=EAGER in the plain run (does CUPTI load every module eagerly?).

    python tools/probes/record_wall_probe.py
"""

from __future__ import annotations

import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = [sys.executable, str(ROOT / "examples" / "record" / "serve_torch.py")]
RECORD = [sys.executable, "-m", "graphcert", "record", "--no-certificate", "--"]


def timed(label: str, cmd: list[str], env: dict[str, str] | None = None) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False,
                          env={**os.environ, **(env or {})})
    wall = time.perf_counter() - t0
    tail = (done.stdout.strip().splitlines() or [""])[-1][:160]
    print(f"{label}: {wall:.2f} s (exit {done.returncode}) | {tail}", flush=True)
    if done.returncode != 0:
        print(done.stderr[-800:], flush=True)
    return wall


def main() -> None:
    timed("plain example", EXAMPLE)
    timed("plain example again", EXAMPLE)
    timed("plain example, CUDA_MODULE_LOADING=EAGER", EXAMPLE, {"CUDA_MODULE_LOADING": "EAGER"})
    timed("torch CUDA start alone", [sys.executable, "-c",
                                     "import torch; torch.zeros(1, device='cuda'); "
                                     "torch.cuda.synchronize()"])
    with tempfile.TemporaryDirectory() as tmp:
        nothing = Path(tmp) / "nothing.py"
        nothing.write_text("print('no CUDA here')\n")
        timed("record of a program without CUDA", [*RECORD, sys.executable, str(nothing)])
        start = Path(tmp) / "torch_start.py"
        start.write_text("import torch; torch.zeros(1, device='cuda'); torch.cuda.synchronize()\n")
        timed("record of torch's CUDA start", [*RECORD, sys.executable, str(start)])
        timed("recorded example", [*RECORD, *EXAMPLE])
        prof = Path(tmp) / "record.prof"
        timed("recorded example under cProfile",
              [sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "graphcert", "record",
               "--no-certificate", "--", *EXAMPLE])
        if prof.exists():
            stats = pstats.Stats(str(prof))
            stats.sort_stats("cumulative").print_stats(45)
            stats.sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main()
