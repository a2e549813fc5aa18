#!/usr/bin/env bash
# Fidelity against a native C++ loop, in one run on one machine (needs a GPU and nvcc):
#   1. builds benchmarks/native_graph_loop.cu and runs it (1,000 and 16 chain nodes, the
#      several-streams state, L2 not cleared; then the fresh single-stream state);
#   2. runs `graphcert bench chain[kernels=N]` with the same state and L2 setting;
#   3. prints graph device time per node of both and their ratio (target: within 1%), and the
#      stream path's host cost per launch against the bare cuLaunchKernel loops (target:
#      <= 1.15x graphcert's own bare loop, bare_launch_s in the certificate).
#   bash benchmarks/native_graph_loop.sh [ARCH]      (ARCH defaults to sm_90)
set -euo pipefail
arch=${1:-sm_90}
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build/native}
mkdir -p "$build"
nvcc -O2 -std=c++17 -arch="$arch" "$here/native_graph_loop.cu" -o "$build/native_graph_loop"
"$build/native_graph_loop" --nodes 1000,16 --samples 300 | tee "$build/native.jsonl"
"$build/native_graph_loop" --fresh --nodes 1000,16 --samples 300 | tee "$build/native_fresh.jsonl"
for n in 1000 16; do
  python3 -m graphcert bench "chain[kernels=$n]" --size 1 --no-certificate --json \
    --no-flush-l2 --placements 1 --no-hot --timeout 2 > "$build/graphcert_$n.json"
done
python3 - "$build" <<'PY'
import json, sys
from pathlib import Path

build = Path(sys.argv[1])
native = [json.loads(line) for line in (build / "native.jsonl").read_text().splitlines()]
loops = {d["nodes"]: d for d in native if "nodes" in d}
bare = next(d for d in native if "bare_culaunchkernel_host_us" in d)
for n, row in sorted(loops.items(), reverse=True):
    doc = json.loads((build / f"graphcert_{n}.json").read_text())["runs"][0]["results"]
    size = doc["sizes"][0]
    ours = size["graph"]["device"]["median_s"] / n * 1e6
    theirs = row["graph_device_us_per_node"]
    print(f"{n:5d} nodes  graph device per node: graphcert {ours:.4f} us, native "
          f"{theirs:.4f} us, ratio {ours / theirs:.4f} (target within 1%)")
    per_op = size.get("stream_host_per_op_s")
    if per_op and doc.get("bare_launch_s"):
        print(f"{n:5d} kernels stream host per launch {per_op * 1e6:.3f} us: "
              f"{per_op / doc['bare_launch_s']:.3f}x graphcert's bare Python cuLaunchKernel loop "
              f"({doc['bare_launch_s'] * 1e6:.3f} us; target <= 1.15x), "
              f"{per_op * 1e6 / bare['bare_culaunchkernel_host_us']:.3f}x the native one "
              f"({bare['bare_culaunchkernel_host_us']:.3f} us)")
PY
