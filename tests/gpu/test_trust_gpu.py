"""On a GPU: verify and bench sign their certificates through the one write path, and the
gate accepts them with --require-signature, refuses them without the key, and finds them
current (sources and method digests recomputed the same way)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from graphcert.cuda.context import RunContext
from tests._env import child_env

ROOT = Path(__file__).resolve().parents[2]
KEY = "gpu-test-signing-key-0123456789abcdef"  # a throwaway test key


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    full = child_env(NO_COLOR="1", **env)
    full.pop("GITHUB_STEP_SUMMARY", None)
    for name in ("GRAPHCERT_SIGNING_KEY", "GRAPHCERT_SIGNING_KEY_FILE"):
        if name not in env:
            full.pop(name, None)
    return subprocess.run([sys.executable, "-m", "graphcert", *args], capture_output=True,
                          text=True, env=full, cwd=ROOT, timeout=300)


def test_verify_and_bench_sign_and_the_gate_checks(gpu_ctx: RunContext, tmp_path: Path) -> None:
    out = tmp_path / "certs"
    keyfile = tmp_path / "key"
    keyfile.write_text(KEY)
    done = _run(["verify", "chain[kernels=4]", "--classes", "1..2", "--samples", "2",
                 "--out", str(out), "--signing-key-file", str(keyfile)])
    assert done.returncode == 0, done.stderr
    done = _run(["bench", "chain[kernels=4]", "--size", "1", "--min-time", "0.01",
                 "--timeout", "0.5", "--max-noise", "0.5", "--out", str(out)],
                GRAPHCERT_SIGNING_KEY=KEY)
    assert done.returncode == 0, done.stderr
    certs = sorted(out.glob("*.json"))
    assert len(certs) == 2
    for path in certs:
        doc = json.loads(path.read_text())
        assert doc["signature"]["algorithm"] == "hmac-sha256"
        assert len(doc["workload"]["method_digest"]) == 64
    # the default policy (this checkout's pyproject) requires every built-in: use one that
    # asks for nothing but what the gate always checks
    policy = tmp_path / "policy.toml"
    policy.write_text("[tool.graphcert.gate]\n")
    gate = _run(["gate", str(out), "--require-signature", "--policy", str(policy)],
                GRAPHCERT_SIGNING_KEY=KEY)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    gate = _run(["gate", str(out), "--require-signature", "--policy", str(policy)])  # no key
    assert gate.returncode == 2 and gate.stderr.count("no signing key") == 2
