"""What `graphcert record -- COMMAND` costs a program; prints figures, asserts nothing.

(a) The serving loop's own step time: examples/record/serve_torch.py --steps 20000
    --step-time, plain and under `graphcert record --no-certificate --`, alternating, 3 runs
    each; medians, their ratio and whether the recorded loop is within 2% of the plain one.
(b) The fixed cost of a process's start: examples/record/native_server.cu with --steps 0
    (CUDA initialised, 7 graphs captured, nothing served), 10 runs each of: plain; with the
    collector loaded but idle (GRAPHCERT_COLLECTOR_IDLE=1: libcupti loaded, nothing
    subscribed); with the full collector (the environment `record` gives a process). Medians
    in ms, and the collector's cost beyond loading libcupti.

    python benchmarks/record_overhead.py [--quick] [--repeat 3] [--steps 20000] [--skip a|b]
        [--breakdown]  # (a) again with each part of the collector left off in turn
        [--flush-ms MS]  # (a) again with the collector's periodic flush every MS ms
        [--off PARTS]  # (a) again with these parts left off together

The collector is built by graphcert.injection.build.build() (cached after the first call).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphcert.injection.build import Built

ROOT = Path(__file__).resolve().parents[1]
SERVE_TORCH = ROOT / "examples" / "record" / "serve_torch.py"
NATIVE = ROOT / "examples" / "record" / "native_server.cu"
STEP_US = re.compile(r"^serve_torch: step_us ([0-9.]+)$", re.MULTILINE)


def _run(cmd: list[str], env: Mapping[str, str] | None = None) -> str:
    """stdout of cmd run from the repository root; exits naming the command if it failed."""
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False,
                          env=None if env is None else dict(env))
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()[-800:]}")
    return done.stdout


def gpu_name() -> str:
    """Device 0's name (the driver's), or why it is unknown."""
    try:
        from graphcert.cuda.device import device_info

        return device_info(0).name
    except Exception as exc:  # a figure without its GPU is still worth printing
        return f"unknown ({exc})"


PARTS = ("graphs", "kernels", "calls", "markers", "callbacks")  # GRAPHCERT_COLLECTOR_OFF's


def step_time(steps: int, runs: int, breakdown: bool = False,
              flush_ms: int | None = None, off: str | None = None) -> None:
    """(a): the example's own mean step time, plain against recorded; with `breakdown`,
    recorded again with each part of the collector left off in turn (GRAPHCERT_COLLECTOR_OFF:
    graph launch records, kernel records, launch-call records, NVTX markers, the driver
    callbacks), so the cost is named by what pays it; with `flush_ms`, recorded again with
    the collector's periodic flush every `flush_ms` ms (GRAPHCERT_FLUSH_MS; 200 by default);
    with `off`, recorded again with those parts left off together ("kernels,calls,markers,
    callbacks": graph launch records alone)."""
    program = [sys.executable, str(SERVE_TORCH), "--steps", str(steps), "--step-time"]
    recorded = [sys.executable, "-m", "graphcert", "record", "--no-certificate", "--",
                *program]
    variants: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "plain": (program, None), "recorded": (recorded, None)}
    if breakdown:
        variants.update((f"without {part}", (recorded, {**os.environ,
                                                         "GRAPHCERT_COLLECTOR_OFF": part}))
                        for part in PARTS)
    if flush_ms is not None:
        variants[f"flushed every {flush_ms} ms"] = (
            recorded, {**os.environ, "GRAPHCERT_FLUSH_MS": str(flush_ms)})
    if off is not None:
        variants[f"without {off}"] = (recorded, {**os.environ, "GRAPHCERT_COLLECTOR_OFF": off})
    times: dict[str, list[float]] = {what: [] for what in variants}
    for _ in range(runs):
        for what, (cmd, env) in variants.items():
            found = STEP_US.search(_run(cmd, env))
            if found is None:
                sys.exit(f"{SERVE_TORCH.name} printed no `serve_torch: step_us` line")
            times[what].append(float(found.group(1)))
    med = {what: statistics.median(ts) for what, ts in times.items()}
    plain, rec = med["plain"], med["recorded"]
    print(f"(a) serve_torch step time, --steps {steps}, median of {runs} (alternating):")
    print(f"    plain {plain:.2f} us, recorded {rec:.2f} us, ratio {rec / plain:.4f}; "
          f"within 2%: {'yes' if rec <= plain * 1.02 else 'no'}")
    for what in variants:
        if what not in ("plain", "recorded"):
            print(f"    recorded {what}: {med[what]:.2f} us (ratio {med[what] / plain:.4f})")
    print(f"    runs: {', '.join(f'{w} {ts}' for w, ts in times.items())}")


def build_native(into: Path) -> Path:
    """native_server built for this GPU (-arch=native, so no PTX JIT at start), else with
    the header's plain build line."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    binary = into / "native_server"
    for arch in (["-arch=native"], []):
        done = subprocess.run([nvcc, "-O2", *arch, "-o", str(binary), str(NATIVE)],
                              capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return binary
    sys.exit(f"nvcc could not build {NATIVE}: {done.stderr.strip()[-800:]}")


def collector_env(built: Built, run_dir: Path, idle: bool) -> dict[str, str]:
    """The environment `record` gives the command (graphcert.run.record_command's own),
    pointed at a private run folder; `idle` loads the collector (and so libcupti) and stops
    there."""
    from graphcert.run.record_command import collector_env as record_env

    env, _ = record_env(os.environ, collector=built.collector, exit_hook=built.exit_hook,
                        libcupti=built.libcupti, run_dir=run_dir)
    if idle:
        env["GRAPHCERT_COLLECTOR_IDLE"] = "1"
    return env


def start_cost(runs: int) -> None:
    """(b): one native process's start and end, plain, with libcupti only, with the collector."""
    from graphcert.injection.build import build  # lazily: only (b) needs the collector

    built = build()
    with tempfile.TemporaryDirectory(prefix="record-overhead-") as tmp:
        binary = build_native(Path(tmp))
        cmd = [str(binary), "--steps", "0"]
        _run(cmd)  # the first run pays the driver's and the page cache's first touch
        times: dict[str, list[float]] = {"plain": [], "libcupti": [], "collector": []}
        for i in range(runs):
            for what in times:
                run_dir = Path(tmp) / f"run-{what}-{i}"
                run_dir.mkdir()
                env = (None if what == "plain"
                       else collector_env(built, run_dir, what == "libcupti"))
                t0 = time.perf_counter()
                _run(cmd, env)
                times[what].append((time.perf_counter() - t0) * 1e3)
    med = {what: statistics.median(ts) for what, ts in times.items()}
    print(f"(b) native_server --steps 0, process wall, median of {runs} (alternating):")
    print(f"    plain {med['plain']:.1f} ms, libcupti loaded (collector idle) "
          f"{med['libcupti']:.1f} ms, full collector {med['collector']:.1f} ms")
    print(f"    libcupti's load: {med['libcupti'] - med['plain']:.1f} ms; "
          f"collector beyond libcupti's load: {med['collector'] - med['libcupti']:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 run for (a), 3 for (b)")
    parser.add_argument("--repeat", type=int, default=None, help="(a)'s runs of each (3)")
    parser.add_argument("--steps", type=int, default=20000, help="(a)'s serving steps")
    parser.add_argument("--skip", choices=("a", "b"), help="leave one part out")
    parser.add_argument("--flush-ms", type=int, default=None, metavar="MS",
                        help="(a) again with the collector flushing every MS ms")
    parser.add_argument("--off", default=None, metavar="PARTS",
                        help="(a) again with these parts of the collector left off together "
                             f"(a comma list of {', '.join(PARTS)})")
    parser.add_argument("--breakdown", action="store_true",
                        help="(a) again with each part of the collector left off in turn")
    args = parser.parse_args()
    print(f"GPU 0: {gpu_name()}")
    if args.skip != "a":
        step_time(args.steps, args.repeat or (1 if args.quick else 3), args.breakdown,
                  args.flush_ms, args.off)
    if args.skip != "b":
        start_cost(3 if args.quick else 10)


if __name__ == "__main__":
    main()
