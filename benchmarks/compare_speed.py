"""Prints how long verify's output comparison takes, the old implementation (np.isclose over
whole arrays, a two-key lexsort of a join's pairs) against graphcert.outputs, over the
sizes `graphcert verify ALL --classes 2^0..2^20 --samples 4` compares. Host only (no GPU): the
"outputs" are each workload's own reference, rows of unordered outputs shuffled as a GPU hash
join would emit them, so both implementations do the full work and must agree (they do, or
this exits 1).

    PYTHONPATH=. python benchmarks/compare_speed.py [--classes 2^0..2^20] [--samples 4]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference_speed import BUILTINS, HostContext  # noqa: E402

from graphcert.buckets import parse_classes, sample_sizes  # noqa: E402
from graphcert.outputs import mismatches  # noqa: E402
from graphcert.workloads import registry  # noqa: E402
from graphcert.workloads.base import Tolerance  # noqa: E402


def old_mismatches(got: dict[str, np.ndarray], want: dict[str, np.ndarray],
                   tol: Tolerance) -> list[str]:
    """graphcert.outputs before issue 16 (np.isclose, lexsort), for the comparison."""
    problems = []
    for name in sorted(set(want) | set(got)):
        a, b = np.asarray(got[name]), np.asarray(want[name])
        if name in tol.unordered:
            a = np.sort(a, kind="stable") if a.ndim == 1 else a[np.lexsort(a.T[::-1])]
            b = np.sort(b, kind="stable") if b.ndim == 1 else b[np.lexsort(b.T[::-1])]
        if a.shape != b.shape:
            problems.append(f"output {name!r}: shape")
            continue
        if a.size == 0:
            continue
        if np.issubdtype(b.dtype, np.floating):
            bad = ~np.isclose(a, b, rtol=tol.rtol, atol=tol.atol)
        else:
            bad = a != b
        if bad.any():
            first = int(np.flatnonzero(bad.reshape(-1))[0])
            problems.append(f"output {name!r}: {int(bad.sum())} of {a.size} values differ; "
                            f"first at flat index {first}: {a.reshape(-1)[first].item()} != "
                            f"{b.reshape(-1)[first].item()}")
    return problems


def outputs_like_a_gpu(want: dict[str, Any], tol: Tolerance, rng: np.random.Generator
                       ) -> dict[str, np.ndarray]:
    got = {}
    for name, value in want.items():
        a = np.array(value, copy=True)
        if name in tol.unordered and a.ndim >= 1 and len(a) > 1:
            a = a[rng.permutation(len(a))]
        got[name] = a
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", default="2^0..2^20")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workloads", default=",".join(BUILTINS))
    args = parser.parse_args()
    capacities = parse_classes(args.classes)
    rng = np.random.default_rng(args.seed)
    print(f"compare for verify --classes {args.classes} --samples {args.samples}; seconds")
    print(f"{'workload':<10}{'old':>10}{'new':>10}{'speedup':>9}")
    total_old = total_new = 0.0
    for name in args.workloads.split(","):
        workload, ctx = registry.load(name).native().workload, HostContext(args.seed)
        old_s = new_s = 0.0
        for capacity in capacities:
            workload.setup(ctx, capacity)
            for n in sample_sizes(capacity, args.samples, args.seed):
                want = dict(workload.reference(n))
                got = outputs_like_a_gpu(want, workload.tolerance, rng)
                t0 = time.perf_counter()
                before = old_mismatches(got, want, workload.tolerance)
                t1 = time.perf_counter()
                after = mismatches(got, want, workload.tolerance)
                t2 = time.perf_counter()
                if before != after:
                    print(f"{name} n={n}: results differ: {before} != {after}")
                    return 1
                old_s, new_s = old_s + t1 - t0, new_s + t2 - t1
            workload.teardown()
        total_old, total_new = total_old + old_s, total_new + new_s
        print(f"{name:<10}{old_s:>10.3f}{new_s:>10.3f}{old_s / max(new_s, 1e-9):>8.1f}x",
              flush=True)
    print(f"{'total':<10}{total_old:>10.3f}{total_new:>10.3f}"
          f"{total_old / max(total_new, 1e-9):>8.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
