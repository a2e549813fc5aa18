"""Prints how long the built-ins' numpy references take for exactly the sizes
`graphcert verify ALL --classes 2^0..2^20 --samples 4` compares, before and after they were
made fast. Host only (no GPU): setup() runs against a context that discards uploads.

"before" is the workload modules at commit BEFORE (loaded from git), "after" the working
tree; each figure is the median of --repeat cold runs (the in-process cache cleared).
Reference time is what verify's compare phase spends in reference(n); setup is reported
apart (it is verify's setup phase).

    PYTHONPATH=. python benchmarks/reference_speed.py [--classes 2^0..2^20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _hostctx import HostContext  # noqa: E402  (shared with the tests)

from graphcert.buckets import parse_classes, sample_sizes
from graphcert.workloads import memo, registry

BEFORE = "af4b39d"
BUILTINS = ("scan", "join", "fixpoint", "decode", "resident", "chain", "converge")
_MODULES = {"scan": "Scan", "join": "Join", "fixpoint": "Fixpoint", "decode": "Decode",
            "resident": "Resident", "chain": "Chain", "converge": "Converge"}


def old_workload(name: str) -> Any:
    """The built-in `name` as it was at BEFORE, from `git show` (no checkout)."""
    source = subprocess.run(["git", "show", f"{BEFORE}:graphcert/workloads/{name}.py"],
                            check=True, capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader(f"_before_{name}", loader=None)
    assert spec is not None
    module = ModuleType(spec.name)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    exec(compile(source, f"{BEFORE}:{name}.py", "exec"), module.__dict__)  # noqa: S102
    return getattr(module, _MODULES[name])()


def build_all(workload: Any, capacities: list[int], samples: int, seed: int
              ) -> tuple[float, float]:
    """(setup seconds, reference seconds) over every class and sample size, as verify."""
    ctx, setup_s, ref_s = HostContext(seed), 0.0, 0.0
    for capacity in capacities:
        t0 = time.perf_counter()
        workload.setup(ctx, capacity)
        setup_s += time.perf_counter() - t0
        for n in sample_sizes(capacity, samples, seed):
            t0 = time.perf_counter()
            workload.reference(n)
            ref_s += time.perf_counter() - t0
        workload.teardown()
    return setup_s, ref_s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", default="2^0..2^20")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workloads", default=",".join(BUILTINS))
    args = parser.parse_args()
    capacities = parse_classes(args.classes)
    names = args.workloads.split(",")
    print(f"references for verify {' '.join(names)} --classes {args.classes} "
          f"--samples {args.samples} --seed {args.seed}; medians of {args.repeat}; seconds")
    print(f"{'workload':<10}{'before ref':>12}{'after ref':>12}{'speedup':>9}"
          f"{'before setup':>14}{'after setup':>13}")
    totals = [0.0, 0.0, 0.0, 0.0]
    after: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    for _ in range(args.repeat):
        memo.clear()  # cold, then the workloads in order in one process, as one verify runs
        for name in names:
            after[name].append(build_all(registry.load(name).native().workload, capacities,
                                         args.samples, args.seed))
    for name in names:
        before = [build_all(old_workload(name), capacities, args.samples, args.seed)
                  for _ in range(args.repeat)]
        row = [statistics.median(r[i] for r in runs) for runs in (before, after[name])
               for i in (1, 0)]
        br, bs, ar, as_ = row
        totals = [t + v for t, v in zip(totals, (br, ar, bs, as_), strict=True)]
        print(f"{name:<10}{br:>12.3f}{ar:>12.3f}{br / max(ar, 1e-9):>8.1f}x"
              f"{bs:>14.3f}{as_:>13.3f}", flush=True)
    print(f"{'total':<10}{totals[0]:>12.3f}{totals[1]:>12.3f}"
          f"{totals[0] / max(totals[1], 1e-9):>8.1f}x{totals[2]:>14.3f}{totals[3]:>13.3f}")
    print("note: converge after fixpoint in one process reuses fixpoint's label walk "
          "(the order verify runs them in); alone it pays for its own walk.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
