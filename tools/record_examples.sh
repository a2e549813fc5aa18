#!/usr/bin/env bash
# graphcert record's examples on the GPU machine (issue 32), from the repository root, after
# tools/device_run.sh's install lines (CUPTI wheels in /tmp/cupti; PYTHONPATH=.:/tmp/site:
# /tmp/cupti, GRAPHCERT_GIT_COMMIT set). Everything goes under $1 (default $OUT/w):
#   probe.log      tools/probes/record_probe.py (subscribing; torch.profiler beside record)
#   reports/       the good run of serve_torch.py and compile_torch.py -> reports/
#   fixtures/      the --fallback and --recapture runs -> tests/fixtures/record/
#   *.log          each command's output; steps.log each step's exit code and seconds
# If the smoke run fails on subscribing to CUPTI, the runs after it load PyTorch's own
# libcupti first (LD_PRELOAD; the probe shows which copy answered what), and steps.log says so.
set -u
W=${1:-$OUT/w}
mkdir -p "$W/reports" "$W/fixtures"
step() {
  local name=$1 limit=$2; shift 2
  local start; start=$(date +%s)
  timeout "$limit" "$@" > "$W/$name.log" 2>&1
  rc=$?
  echo "$name rc=$rc $(( $(date +%s) - start )) s" | tee -a "$W/steps.log"
}

step probe 150 python3 tools/probes/record_probe.py
step smoke 60 python3 -m graphcert record --no-certificate -- python3 examples/record/serve_torch.py --steps 50
if [ $rc != 0 ] && grep -q "subscrib" "$W/smoke.log"; then
  lib=$(python3 -c "import pathlib, torch; print(next(iter(sorted(pathlib.Path(torch.__file__).parents[1].glob('nvidia/*/lib/libcupti.so.*'))), ''))")
  export LD_PRELOAD=$lib
  echo "subscribing failed: LD_PRELOAD=$lib from here on" | tee -a "$W/steps.log"
  step smoke_torch_cupti 60 python3 -m graphcert record --no-certificate -- python3 examples/record/serve_torch.py --steps 50
fi
step good 60 python3 -m graphcert record --out "$W/reports" -- python3 examples/record/serve_torch.py
step fallback 60 python3 -m graphcert record --out "$W/fixtures" -- python3 examples/record/serve_torch.py --fallback
step recapture 60 python3 -m graphcert record --out "$W/fixtures" -- python3 examples/record/serve_torch.py --recapture 500
step compile 120 python3 -m graphcert record --out "$W/reports" -- python3 examples/record/compile_torch.py
# the good serve run passes the policy (exit 0); the planted runs fail it (exit 1), naming
# the eager kernels (min_graph_coverage, max_steady_eager_launches) and the churned topology
step gate_good 60 python3 -m graphcert gate "$W"/reports/record-serve_torch-*.json --policy examples/record/policy.toml
step gate_planted 60 python3 -m graphcert gate "$W/fixtures" --policy examples/record/policy.toml
step overhead 150 python3 benchmarks/record_overhead.py --repeat 2
step tests 300 python3 -m pytest -q -p no:cacheprovider -rs --timeout 120 tests/gpu/test_record_gpu.py
