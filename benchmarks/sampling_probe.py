"""Record every sampling loop's raw samples during `graphcert bench`, to study stopping rules
offline (issue 30). Runs on a GPU.

Each loop (one quantity, one side, one placement; or a framework step's host figure) is
cut at the same short time, so the arrays show how each figure's samples are spread and how
long one sample takes; `benchmarks/stopping_replay.py` replays stopping rules over them.

    PYTHONPATH=. python3 benchmarks/sampling_probe.py OUT.npz chain decode \
        'examples/steps/torch_decode.py:DECODE --classes vllm:16' --loop-time 0.3
"""

from __future__ import annotations

import argparse
import shlex
import time
from collections.abc import Callable
from typing import Any

import numpy as np

LOOPS: list[tuple[str, np.ndarray, float]] = []  # (label, samples, wall seconds)
_current: list[str] = [""]


def _patch() -> None:
    from graphcert.run import harness, steps_bench

    collect = harness.Harness._collect

    def recorded_collect(self: Any, one_round: Callable[[], list[float]]) -> Any:
        t0 = time.perf_counter()
        got = collect(self, one_round)
        LOOPS.append((_current[0], np.asarray(got.samples), time.perf_counter() - t0))
        return got

    harness.Harness._collect = recorded_collect  # type: ignore[method-assign]
    sample = steps_bench._sample

    def recorded_sample(rule: Any, one: Callable[[], float]) -> Any:
        t0 = time.perf_counter()
        timing, raw = sample(rule, one)
        LOOPS.append((_current[0] + ":step", np.asarray(raw), time.perf_counter() - t0))
        return timing, raw

    steps_bench._sample = recorded_sample


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("workloads", nargs="+", help="a workload, with bench options after it")
    parser.add_argument("--loop-time", type=float, default=0.3)
    args = parser.parse_args()
    _patch()
    from graphcert.cli import cli

    walls: dict[str, float] = {}
    for spec in args.workloads:
        words = shlex.split(spec)
        _current[0] = words[0]
        t = str(args.loop_time)
        argv = ["bench", *words, "--no-certificate", "--max-noise", "1e-9", "--min-time", t,
                "--timeout", t]
        t0 = time.perf_counter()
        try:
            cli.main(argv, standalone_mode=False)
        except SystemExit:
            pass
        walls[words[0]] = time.perf_counter() - t0
        print(f"probe {words[0]}: {walls[words[0]]:.1f} s wall, {len(LOOPS)} loops so far",
              flush=True)
    np.savez_compressed(args.out, labels=np.array([lab for lab, _, _ in LOOPS]),
                        walls=np.array([w for _, _, w in LOOPS]),
                        runs=np.array([f"{k}={v}" for k, v in walls.items()]),
                        **{f"s{i}": s for i, (_, s, _) in enumerate(LOOPS)})


if __name__ == "__main__":
    main()
