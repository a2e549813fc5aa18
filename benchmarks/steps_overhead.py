"""graphcert's own cost of verifying a framework step, beside the framework's.

    python benchmarks/steps_overhead.py                       # PyTorch example, 20 buckets
    python benchmarks/steps_overhead.py --step examples/steps/cupy_step.py:STEP --classes 1,8,64
    python benchmarks/steps_overhead.py --synthetic           # CPU: the tests' fake framework

First graphcert's one-time set-up (importing its graph reader and cuda.bindings, initialising
the driver bindings, importing python-igraph, the first driver graph-memory read and, for
PyTorch, the allocator's first memory snapshot), timed apart and not charged to any bucket.
Then per bucket the wall time of verifying it, split into
  framework: the step's make_inputs, its warm-up calls, capture and instantiate, replays and
             the eager reference runs (each waited for), and freeing the graph and its pool
             (release), and
  graphcert: filling the static buffers and padding, reading the graph (snapshot: canonical
             order and fingerprints), memory figures (the pool's bytes, the driver's graph
             memory), keeping the eager rows of n and comparing them (on the device for
             PyTorch and CuPy: one host read per sample), and "other" (the wall time no
             phase accounts for: bookkeeping, results),
and graphcert's share of the bucket (target <= 10%). Then the whole verify: its wall time
(target <= 60 s for the PyTorch example over 20 buckets on an H100) and graphcert's share of
the per-bucket total, the one-time set-up shown beside it. Nothing is written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", default=str(ROOT / "examples/steps/torch_decode.py:DECODE"))
    parser.add_argument("--classes", default="vllm:136", help="vllm:136 is 20 buckets")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--device", type=int, default=0, help="GPU number (as --device)")
    parser.add_argument("--synthetic", action="store_true",
                        help="the CPU tests' synthetic framework instead of --step")
    args = parser.parse_args()

    from graphcert.buckets import parse_buckets
    from graphcert.run.steps import FRAMEWORK_PHASES, OWN_PHASES, StepVerifier, open_adapter
    from graphcert.workloads.registry import load

    if args.synthetic:
        sys.path.insert(0, str(ROOT / "tests"))
        import _fakestep

        step, ref = _fakestep.SAFE, "synthetic:SAFE"
    else:
        step, ref = load(args.step).step(), args.step
    buckets = parse_buckets(args.classes)
    verifier = StepVerifier(step, ref, open_adapter(step, args.device), args.samples, 0)
    print(f"{step.name} ({step.framework}) over {args.classes}: {len(buckets)} buckets, "
          f"{args.samples} sizes each")
    t0 = time.perf_counter()
    verifier.prepare()
    once = time.perf_counter() - t0
    print(f"one-time set-up (graphcert's reader: imports, driver bindings; first memory "
          f"reads): {once * 1e3:.1f} ms, not charged to any bucket")
    print(f"{'bucket':>7} {'wall ms':>9} {'framework ms':>13} {'graphcert ms':>13} "
          f"{'share':>7}  (graphcert: {' / '.join(OWN_PHASES)} / other ms)")
    start = time.perf_counter()
    worst = 0.0
    failed = 0
    for capacity in buckets:
        before = dict(verifier.phases.seconds)
        t0 = time.perf_counter()
        result = verifier.verify_bucket(capacity, buckets.lower_edge(capacity))
        wall = time.perf_counter() - t0
        spent = {k: v - before.get(k, 0.0) for k, v in verifier.phases.seconds.items()}
        framework = sum(spent.get(p, 0.0) for p in FRAMEWORK_PHASES)
        own = max(wall - framework, 0.0)
        share = own / wall if wall else 0.0
        worst = max(worst, share)
        bad = result.status != "pass"
        failed += bad
        parts = " / ".join(f"{spent.get(p, 0.0) * 1e3:.1f}" for p in OWN_PHASES)
        other = own - sum(spent.get(p, 0.0) for p in OWN_PHASES)
        print(f"{capacity:>7} {wall * 1e3:>9.1f} {framework * 1e3:>13.1f} {own * 1e3:>13.1f} "
              f"{share:>7.1%}  ({parts} / {other * 1e3:.1f}){'  FAIL' if bad else ''}")
    total = time.perf_counter() - start
    phases = verifier.phases.seconds
    framework = sum(phases.get(p, 0.0) for p in FRAMEWORK_PHASES)
    own = total - framework
    split = ", ".join(f"{p} {phases.get(p, 0.0):.3f}" for p in (*FRAMEWORK_PHASES, *OWN_PHASES))
    print(f"phases (s): {split}")
    print(f"verify wall {total + once:.2f} s over {len(buckets)} buckets (target <= 60 s for "
          f"20 on an H100): one-time set-up {once:.2f} s, then framework {framework:.2f} s, "
          f"graphcert {own:.2f} s = {own / total:.1%} of the per-bucket total (target <= 10%); "
          f"worst bucket {worst:.1%}; {failed} bucket(s) failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
