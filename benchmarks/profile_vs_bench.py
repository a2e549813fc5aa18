"""Two commands, one device time of a replay: for chain[kernels=1000] at size 1, profile's
untraced replay device time (held: CUDA events around one launch queued behind a blocking
kernel, Harness.held_sample, median over its replays) against bench's graph device time
(the same held sample, median over placements). Bound: within 5%.

    python benchmarks/profile_vs_bench.py [--kernels 1000] [--replays 200] [--no-flush-l2]

Both run in this process, bench first (its own harness, --placements, no hot figure), then
the profile, L2 cleared before every sample in both unless --no-flush-l2. Also printed: the
traced replay's device time and span (first kernel start to last kernel end, CUPTI), whose
differences from the held time are tracing's cost per record and the graph's launch latency
before its first kernel and after its last. Nothing is written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BOUND = 0.05


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1000)
    parser.add_argument("--replays", type=int, default=200)
    parser.add_argument("--placements", type=int, default=4)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--no-flush-l2", action="store_true")
    args = parser.parse_args()
    flush = not args.no_flush_l2

    from graphcert.cert.results.figures import Timing
    from graphcert.options import Options
    from graphcert.run.harness import BenchSettings
    from graphcert.run.jobs import bench_workloads
    from graphcert.run.profile import ProfileSettings, profile_workloads

    ref, size = f"chain[kernels={args.kernels}]", 1
    (bench,) = bench_workloads([ref], [size], BenchSettings(placements=args.placements,
                                                            hot=False, flush_l2=flush),
                               device=args.device, options=Options())
    row = bench.result.sizes[0]
    device = row.graph.device
    if not isinstance(device, Timing):
        print(f"bench gave no graph device time: {device.reason}")
        return 1
    (prof,) = profile_workloads([ref], [size], ProfileSettings(args.replays, flush_l2=flush),
                                device=args.device, options=Options())
    cls = prof.result.classes[0]
    p, over = cls.profile, cls.overhead
    if over is None:
        print(f"profile gave no held replay time: {cls.overhead_reason}")
        return 1
    bench_us = device.median_s * 1e6
    ratio = over.untraced_ns / 1e3 / bench_us
    print(f"{ref} at size {size}: {len(p.nodes)} timed nodes of {row.node_count}, "
          f"L2 {'cleared' if flush else 'warm'} before each sample")
    print(f"  bench graph device time           {bench_us:10.1f} us "
          f"({device.samples} samples, {device.ended.value if device.ended else '-'})")
    print(f"  profile untraced replay time      {over.untraced_ns / 1e3:10.1f} us "
          f"({over.samples} held replays)")
    print(f"  profile traced replay time        {over.traced_ns / 1e3:10.1f} us "
          f"({over.ratio:.3f}x, {over.extra_ns_per_record or 0:+.0f} ns per record)")
    print(f"  profile traced span               {p.span_ns / 1e3:10.1f} us "
          f"(first kernel start to last end)")
    print(f"  profile node time per node        {p.sum_ns / max(len(p.nodes), 1):10.1f} ns "
          f"(the rest of the span is gaps)")
    print(f"  profile untraced / bench          {ratio:10.4f} "
          f"({'within' if abs(ratio - 1) <= BOUND else 'OUTSIDE'} {BOUND:.0%})")
    return 0 if abs(ratio - 1) <= BOUND else 1


if __name__ == "__main__":
    sys.exit(main())
