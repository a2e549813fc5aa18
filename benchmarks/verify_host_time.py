"""Prints the host side of verify's compare phase for
`graphcert verify scan join fixpoint decode resident chain converge --classes 2^0..2^20
--samples 4`, on the CPU (no GPU), for the package at a base commit ("before") and the
working tree ("after").

Per class: setup() against a context that discards uploads (not timed), then for each sample
size what verify's compare does: reference(n) once (the session caches it per n) and
mismatches() twice (after exec update, after the size-parameter update; once for a
workload without size parameters). The "outputs" are synthetic: each reference copied, floats
nudged by a few ulp (a GPU's float32 answer is close to, not equal to, the float64
reference), unordered rows shuffled as a hash join emits them. The device-to-host download
itself is not simulated. Verdicts are printed too and must agree (all pass).

    PYTHONPATH=. python benchmarks/verify_host_time.py [--base 40a8661] [--classes 2^0..2^20]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BUILTINS = ("scan", "join", "fixpoint", "decode", "resident", "chain", "converge")


def _gpu_like(want: dict[str, Any], unordered: tuple[str, ...], rng: np.random.Generator
              ) -> dict[str, np.ndarray]:
    got = {}
    for name, value in want.items():
        a = np.array(value, copy=True)
        if a.dtype.kind == "f":
            a *= a.dtype.type(1 + 2.0 ** -21)  # a few ulp off, well inside any tolerance
        if name in unordered and a.ndim >= 1 and len(a) > 1:
            a = a[rng.permutation(len(a))]
        got[name] = a
    return got


def measure(classes: str, samples: int, seed: int, names: list[str]) -> dict[str, Any]:
    """Seconds per workload in this process's graphcert (imported from sys.path)."""
    from reference_speed import HostContext  # type: ignore[import-not-found]

    from graphcert.buckets import parse_classes, sample_sizes
    from graphcert.outputs import mismatches
    from graphcert.workloads import registry

    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}
    for name in names:
        loaded, ctx = registry.load(name), HostContext(seed)
        if hasattr(loaded, "native"):  # issue 29: a LoadedWorkload, its hooks resolved
            workload, hooks = loaded.native().workload, loaded.native().hooks
            tol, twice = hooks.tolerance(), bool(hooks.size_params())
        else:  # the base commit: load gave the workload, hooks were module functions
            from graphcert.workloads.base import size_params, tolerance

            workload = loaded
            tol, twice = tolerance(workload), bool(size_params(workload))
        ref_s = cmp_s = 0.0
        verdicts: list[int] = []
        for capacity in parse_classes(classes):
            workload.setup(ctx, capacity)
            for n in sample_sizes(capacity, samples, seed):
                t0 = time.perf_counter()
                want = dict(workload.reference(n))
                ref_s += time.perf_counter() - t0
                got = _gpu_like(want, tol.unordered, rng)
                for _ in range(2 if twice else 1):
                    t0 = time.perf_counter()
                    verdicts.append(len(mismatches(got, want, tol)))
                    cmp_s += time.perf_counter() - t0
            workload.teardown()
        out[name] = {"reference": ref_s, "compare": cmp_s, "problems": sum(verdicts)}
    return out


def _run(tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=f"{tree}{os.pathsep}{ROOT / 'benchmarks'}")
    cmd = [sys.executable, __file__, "--child", "--classes", args.classes,
           "--samples", str(args.samples), "--seed", str(args.seed),
           "--workloads", args.workloads]
    done = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="40a8661", help="commit measured as 'before'")
    parser.add_argument("--classes", default="2^0..2^20")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workloads", default=",".join(BUILTINS))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = args.workloads.split(",")
    if args.child:
        print(json.dumps(measure(args.classes, args.samples, args.seed, names)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.base, "graphcert"],
                                 check=True, capture_output=True).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        before = _run(Path(tmp), args)
    after = _run(ROOT, args)
    print(f"verify host compare, {args.workloads} --classes {args.classes} --samples "
          f"{args.samples}; seconds on this CPU (reference + mismatches; no download)")
    print(f"{'workload':<10}{'before ref':>11}{'cmp':>8}{'total':>8}   "
          f"{'after ref':>10}{'cmp':>8}{'total':>8}{'speedup':>9}")
    tb = ta = 0.0
    for name in names:
        b, a = before[name], after[name]
        bt, at = b["reference"] + b["compare"], a["reference"] + a["compare"]
        tb, ta = tb + bt, ta + at
        flag = "" if b["problems"] == a["problems"] == 0 else "  VERDICTS DIFFER"
        print(f"{name:<10}{b['reference']:>11.3f}{b['compare']:>8.3f}{bt:>8.3f}   "
              f"{a['reference']:>10.3f}{a['compare']:>8.3f}{at:>8.3f}"
              f"{bt / max(at, 1e-9):>8.1f}x{flag}")
    print(f"{'total':<10}{'':>19}{tb:>8.3f}   {'':>18}{ta:>8.3f}{tb / max(ta, 1e-9):>8.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
