#!/usr/bin/env bash
# Records on a GPU machine what the CPU tier and CI check: snapshot fixtures of every built-in
# at three classes (tests/fixtures/snapshots/), topology certificates (reports/), and bench
# certificates (reports/). Run from the repository root with graphcert importable.
#   [WORKLOADS="scan join"] tools/record_on_gpu.sh snapshots|verify|bench OUTDIR
# WORKLOADS picks some of the built-ins (default all seven), e.g. to split bench over two
# device calls.
set -euo pipefail
what=$1
out=$2
builtins=${WORKLOADS:-"scan join fixpoint decode resident chain converge"}
case "$what" in
  snapshots)
    for w in $builtins; do
      python3 -m graphcert capture "$w" --classes 256..1024 --out "$out" > /dev/null
    done
    rm -f "$out"/*.svg ;;
  verify)
    # Every built-in over classes 2^0..2^20, 4 samples each, one certificate per workload.
    time python3 -m graphcert verify $builtins --classes 2^0..2^20 --samples 4 --out "$out" ;;
  bench)
    for w in $builtins; do
      python3 -m graphcert bench "$w" --out "$out"   # every default: each figure to its target
    done ;;
  *) echo "usage: $0 snapshots|verify|bench OUTDIR" >&2; exit 2 ;;
esac
