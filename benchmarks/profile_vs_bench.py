"""Two methods agree (issue 31): for chain[kernels=1000], the profile's span per node (CUPTI:
first kernel start to last kernel end of one replay, median over replays, / nodes) against
bench's graph device time per node (CUDA events around a launch queued behind a blocking
kernel, median over placements, / nodes). Bound: within 5%.

    python benchmarks/profile_vs_bench.py [--kernels 1000] [--replays 200]

Both run in this process, bench first (its own harness, BenchSettings with --placements and
no hot figure), then the profile. Where they differ, the bench figure holds what the span
does not: the graph's launch latency before its first kernel and after its last (one per
launch, so it shrinks per node as the chain grows), and L2 flushed before every sample.
Nothing is written.
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
    args = parser.parse_args()

    from graphcert.cert.results.figures import Timing
    from graphcert.options import Options
    from graphcert.run.harness import BenchSettings
    from graphcert.run.jobs import bench_workloads
    from graphcert.run.profile import profile_workloads

    ref, size = f"chain[kernels={args.kernels}]", 1
    (bench,) = bench_workloads([ref], [size], BenchSettings(placements=args.placements,
                                                            hot=False),
                               device=args.device, options=Options())
    row = bench.result.sizes[0]
    device = row.graph.device
    if not isinstance(device, Timing):
        print(f"bench gave no graph device time: {device.reason}")
        return 1
    (prof,) = profile_workloads([ref], [size], args.replays, device=args.device,
                                options=Options())
    p = prof.result.classes[0].profile
    nodes = len(p.nodes)
    bench_ns = device.median_s * 1e9 / row.node_count
    span_ns = p.span_ns / nodes
    sum_ns = p.sum_ns / nodes
    ratio = span_ns / bench_ns
    print(f"{ref}: {nodes} timed nodes of {row.node_count}")
    print(f"  bench graph device time per node  {bench_ns:9.1f} ns "
          f"(median {device.median_s * 1e6:.1f} us over {device.samples} samples)")
    print(f"  profile span per node             {span_ns:9.1f} ns "
          f"(median span {p.span_ns / 1e3:.1f} us over {p.replays} replays)")
    print(f"  profile node time per node        {sum_ns:9.1f} ns (the rest is gaps)")
    print(f"  span / bench                      {ratio:9.4f} "
          f"({'within' if abs(ratio - 1) <= BOUND else 'OUTSIDE'} {BOUND:.0%})")
    gaps = sorted(g.median_ns for g in p.gaps)
    if gaps:
        print(f"  median gap on a dependent edge    {gaps[len(gaps) // 2]:9.1f} ns")
    return 0 if abs(ratio - 1) <= BOUND else 1


if __name__ == "__main__":
    sys.exit(main())
