"""Bucket lists on the GPU: verify over vLLM-style buckets samples each bucket from the
previous bucket + 1 to the bucket itself, and every bucket is set up at its own capacity."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from graphcert.cuda.context import RunContext
from tests._env import child_env

ROOT = Path(__file__).resolve().parents[2]


def test_verify_scan_over_a_bucket_list(gpu_ctx: RunContext) -> None:
    buckets = [1, 2, 4, 8, 16, 24, 32, 300, 1000]
    run = subprocess.run(
        [sys.executable, "-m", "graphcert", "verify", "scan", "--classes",
         ",".join(map(str, buckets)), "--samples", "4", "--json", "--no-certificate"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env=child_env())
    assert run.returncode == 0, run.stderr[-2000:]
    (doc,) = json.loads(run.stdout)
    classes = doc["results"]["classes"]
    assert [c["capacity"] for c in classes] == buckets
    assert all(c["status"] == "pass" for c in classes), [c["reason"] for c in classes]
    lower = {c["capacity"]: min(s["n"] for s in c["samples"]) for c in classes}
    upper = {c["capacity"]: max(s["n"] for s in c["samples"]) for c in classes}
    assert lower[24] == 17 and lower[300] == 33 and lower[1000] == 301 and lower[1] == 1
    assert all(upper[b] == b for b in buckets)
    assert doc["results"]["settings"]["classes"] == ",".join(map(str, buckets))
