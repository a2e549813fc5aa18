#!/usr/bin/env bash
# Fidelity against a native C++ loop, in one run on one machine (needs a GPU and nvcc):
#   1. builds benchmarks/native_graph_loop.cu;
#   2. ROUNDS times, alternately, one fresh process of the native loop and one of
#      `graphcert bench chain[kernels=N]` per N (1,000 and 16 nodes), both in the
#      several-streams state with L2 not cleared and one buffer placement;
#   3. prints each tool's graph device time per node in every process, the median over
#      processes and their ratio (target: within 1%), and each tool's own spread between
#      processes (at 16 nodes a fresh process moves the figure by a few per cent, in both
#      tools: one process of each cannot show 1%);
#   4. the stream path's host cost per launch against the bare cuLaunchKernel loop timed
#      alternately with it (bare_host_per_op_s; target <= 1.15x), and against the native loop.
#   Each round also runs the native loop with --cubin: graphcert's own chain kernel (built by
#   NVRTC as bench builds it), loaded with cuModuleLoadData and launched as a CUfunction, as
#   graphcert launches it, instead of the runtime's kernel. Every native run reports the SM
#   clock after its samples, graphcert's certificate the clock before and after (--warm-clock,
#   the clock read first as bench does, changed nothing on an H100 or an H200). Then the
#   native loop once in the fresh single-stream state, for reference.
#   bash benchmarks/native_graph_loop.sh [ARCH] [ROUNDS]      (sm_90, 5)
set -euo pipefail
arch=${1:-sm_90}
rounds=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build/native}
mkdir -p "$build"
rm -f "$build"/native_*.jsonl "$build"/graphcert_*.json
nvcc -O2 -std=c++17 -arch="$arch" "$here/native_graph_loop.cu" -o "$build/native_graph_loop"
python3 -c "import sys; from graphcert.cuda import nvrtc
open(sys.argv[1], 'wb').write(nvrtc.build('chain.cu', sys.argv[2]).cubin)" \
  "$build/chain.cubin" "$arch"
for r in $(seq "$rounds"); do
  for n in 1000 16; do
    "$build/native_graph_loop" --nodes "$n" --samples 300 > "$build/native_${n}_$r.jsonl"
    "$build/native_graph_loop" --nodes "$n" --samples 300 --cubin "$build/chain.cubin" \
      > "$build/native_cubin_${n}_$r.jsonl"
    python3 -m graphcert bench "chain[kernels=$n]" --size 1 --no-certificate --json \
      --no-flush-l2 --placements 1 --no-hot --timeout 2 > "$build/graphcert_${n}_$r.json"
  done
done
"$build/native_graph_loop" --fresh --nodes 1000,16 --samples 300 | tee "$build/native_fresh.jsonl"
python3 - "$build" "$rounds" <<'PY'
import json, statistics, sys
from pathlib import Path

build, rounds = Path(sys.argv[1]), int(sys.argv[2])


def spread(xs):
    return f"{min(xs):.4f}-{max(xs):.4f}, {100 * (max(xs) - min(xs)) / statistics.median(xs):.1f}%"


def loop_of(name, n):
    lines = [json.loads(x) for x in (build / name).read_text().splitlines()]
    return lines, next(d for d in lines if d.get("nodes") == n)


def mhz(xs):
    got = [x for x in xs if x is not None and x > 0]
    return f"{statistics.median(got):.0f}" if got else "-"


for n in (1000, 16):
    ours, theirs, host, bare, native_host, native_bare = [], [], [], [], [], []
    cubin, clocks = [], {"ours_before": [], "ours_after": [], "native_after": [],
                         "cubin_after": []}
    for r in range(1, rounds + 1):
        lines, loop = loop_of(f"native_{n}_{r}.jsonl", n)
        theirs.append(loop["graph_device_us_per_node"])
        clocks["native_after"].append(loop.get("sm_clock_mhz_after"))
        _, mod = loop_of(f"native_cubin_{n}_{r}.jsonl", n)
        cubin.append(mod["graph_device_us_per_node"])
        clocks["cubin_after"].append(mod.get("sm_clock_mhz_after"))
        native_host.append(loop["stream_host_us_per_launch"])
        native_bare.append(next(d for d in lines if "bare_culaunchkernel_host_us" in d)
                           ["bare_culaunchkernel_host_us"])
        size = json.loads((build / f"graphcert_{n}_{r}.json").read_text())["runs"][0]["results"]["sizes"][0]
        ours.append(size["graph"]["device"]["median_s"] / n * 1e6)
        clock = size.get("clock_mhz") or {}
        clocks["ours_before"].append(clock.get("before"))
        clocks["ours_after"].append(clock.get("after"))
        host.append(size["stream_host_per_op_s"] * 1e6)
        bare.append((size.get("bare_host_per_op_s") or float("nan")) * 1e6)
    print(f"{n:5d} nodes, graph device per node, {rounds} processes each:")
    print("        graphcert " + " ".join(f"{x:.4f}" for x in ours) + f"  ({spread(ours)}; "
          f"SM clock before/after {mhz(clocks['ours_before'])}/{mhz(clocks['ours_after'])} MHz)")
    print("        native    " + " ".join(f"{x:.4f}" for x in theirs) + f"  ({spread(theirs)}; "
          f"SM clock after {mhz(clocks['native_after'])} MHz)")
    print("        native, graphcert's NVRTC kernel as a CUfunction (--cubin) "
          + " ".join(f"{x:.4f}" for x in cubin) + f"  ({spread(cubin)}; SM clock after "
          f"{mhz(clocks['cubin_after'])} MHz)")
    mo, mt, mc = statistics.median(ours), statistics.median(theirs), statistics.median(cubin)
    print(f"        median over processes: graphcert {mo:.4f} us, native {mt:.4f} us, "
          f"ratio {mo / mt:.4f} (target within 1%); native --cubin {mc:.4f} us, "
          f"ratio {mo / mc:.4f}")
    ratios = [h / b for h, b in zip(host, bare)]
    print(f"{n:5d} kernels, stream host per launch: graphcert " + " ".join(f"{x:.3f}" for x in host)
          + " us; bare loop alongside " + " ".join(f"{x:.3f}" for x in bare)
          + f" us; ratios " + " ".join(f"{x:.3f}" for x in ratios)
          + f" (median {statistics.median(ratios):.3f}x; target <= 1.15x); native loop "
          f"{statistics.median(native_host):.3f} us, native bare {statistics.median(native_bare):.3f} us")
PY
