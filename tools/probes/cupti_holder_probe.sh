#!/usr/bin/env bash
# What `graphcert record -- COMMAND` says of a process that holds CUPTI itself: a Python
# program subscribes through cupti-python before it starts CUDA (torch), then runs a kernel.
# Run on the GPU machine after tools/device_run.sh's install lines; prints both outputs.
set -u
app=$(mktemp --suffix=.py)
cat > "$app" <<'PY'
import sys
from cupti import cupti
try:
    handle = cupti.subscribe(lambda *a: None, None)
    print("program: subscribed to CUPTI first", flush=True)
except Exception as exc:
    print(f"program: subscribing failed: {exc}", flush=True)
import torch
x = torch.ones(1024, device="cuda")
g = torch.cuda.CUDAGraph()
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    y = x * 2
torch.cuda.synchronize()
with torch.cuda.graph(g):
    y = x * 2
for _ in range(10):
    g.replay()
torch.cuda.synchronize()
print("program: done", flush=True)
PY
out=$(mktemp -d)
python3 -m graphcert record --out "$out" -- python3 "$app"
echo "exit $?"
python3 -m graphcert show "$out"/record-*.json | head -30
