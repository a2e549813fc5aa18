"""What CUPTI's per-kernel tracing costs a replay on the device clock (bound: traced /
untraced <= 1.01).

    python benchmarks/profile_overhead.py                 # the built-ins and the PyTorch step
    python benchmarks/profile_overhead.py --replays 500 chain scan

Per workload, in one process: `graphcert profile`'s own measurement (graphcert.run.profile):
WARMUP replays, then R held replays untraced and R traced (each: CUDA events around one
launch queued behind a blocking kernel, L2 cleared before it unless --no-flush-l2), medians
compared. Prints one line per workload and class: untraced and traced median replay device
time, their ratio with its interval and whether it is within the bound, the extra device
time per traced record (a kernel, copy or set run: tracing costs about a fixed time per
traced kernel, so the ratio is large for graphs of short kernels), the traced span (first
kernel start to last end), how many nodes tracing distorts by over 10%, and the host's time
in one launch call untraced and traced. Nothing is written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BOUND = 1.01
BUILT_INS = ("chain", "chain[kernels=1000]", "scan", "converge", "join", "fixpoint", "decode",
             "resident")
STEP = str(ROOT / "examples/steps/torch_decode.py") + ":DECODE"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", default=[*BUILT_INS, STEP])
    parser.add_argument("--replays", type=int, default=200)
    parser.add_argument("--size", type=int, default=1 << 12)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--no-flush-l2", action="store_true")
    args = parser.parse_args()

    from graphcert.errors import GraphcertError
    from graphcert.options import Options
    from graphcert.run.profile import ProfileSettings, profile_workloads

    worst, failed = 0.0, 0
    settings = ProfileSettings(args.replays, flush_l2=not args.no_flush_l2)
    print(f"{'workload':<44} {'class':>8} {'untraced us':>12} {'traced us':>10} {'ratio':>7} "
          f"{'[95%]':>15} {'ns/record':>10} {'span us':>9} {'touched':>9} {'host us':>15}")
    for ref in args.workloads:
        sizes = [8] if ref.endswith(":DECODE") else [args.size]
        try:
            (run,) = profile_workloads([ref], sizes, settings, device=args.device,
                                       options=Options())
        except GraphcertError as exc:  # one workload that cannot run is reported, not fatal
            print(f"{ref:<44} error: {exc.one_line()}")
            failed += 1
            continue
        for cls in run.result.classes:
            o = cls.overhead
            if o is None:
                print(f"{ref:<44} {cls.label:>8} overhead not measured: {cls.overhead_reason}")
                failed += 1
                continue
            worst = max(worst, o.ratio)
            mark = "ok" if o.ratio <= BOUND else f"ABOVE {BOUND}"
            extra = o.extra_ns_per_record
            per = f"{extra:>+10.0f}" if extra is not None else f"{'-':>10}"
            within = o.ratio_interval
            band = f"[{within[0]:.3f},{within[1]:.3f}]" if within is not None else "-"
            p = cls.profile
            touched = f"{len(o.touched(p))}/{len(p.nodes)}"
            host = (f"{o.host_untraced_ns / 1e3:.1f}->{o.host_traced_ns / 1e3:.1f}"
                    if o.host_untraced_ns is not None and o.host_traced_ns is not None else "-")
            print(f"{ref:<44} {cls.label:>8} {o.untraced_ns / 1e3:>12.2f} "
                  f"{o.traced_ns / 1e3:>10.2f} {o.ratio:>7.4f} {band:>15} {per} "
                  f"{p.span_ns / 1e3:>9.2f} {touched:>9} {host:>15} {mark}")
    print(f"worst ratio {worst:.4f} (bound {BOUND}); {failed} workload(s) without a figure")
    return 0 if worst <= BOUND and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
