#!/usr/bin/env bash
# Record the framework-step certificates (topology and bench) into reports/, on an H100/H200
# with PyTorch (CUDA), CuPy and cuda-core installed. The CI gate requires them once the
# commit "gate: require the framework-step certificates" is kept.
#
#   tools/record_steps.sh            # writes reports/{topology,bench}-<step>-<gpu>.json
#   tools/record_steps.sh OUTDIR
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-reports}"
PY="${PYTHON:-python}"
BUCKETS_SMALL="1,2,4,8,16,32,64"

"$PY" -m graphcert verify examples/steps/torch_decode.py:DECODE --classes vllm:64 --out "$OUT"
"$PY" -m graphcert verify examples/steps/cupy_step.py:STEP --classes "$BUCKETS_SMALL" --out "$OUT"
"$PY" -m graphcert verify examples/steps/cuda_core_step.py:STEP --classes "$BUCKETS_SMALL" \
    --out "$OUT"

"$PY" -m graphcert bench examples/steps/torch_decode.py:DECODE --classes 8,16,64 --out "$OUT"
"$PY" -m graphcert bench examples/steps/cupy_step.py:STEP --classes 8,64 --out "$OUT"
"$PY" -m graphcert bench examples/steps/cuda_core_step.py:STEP --classes 8,64 --out "$OUT"

echo "framework-step certificates written to $OUT; check them with: graphcert gate $OUT"
