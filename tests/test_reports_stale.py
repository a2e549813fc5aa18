"""The committed reference reports pass the gate, and go stale when a kernel changes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _gate(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run([sys.executable, "-m", "graphcert", "gate", "reports/"], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)


def test_reference_reports_pass_the_gate() -> None:
    """A topology and a bench certificate for each of the 7 built-ins and the 3 framework-step
    examples, and chain's sweep over kernels=1,10,100,1000 (the sweep certificate and a bench
    certificate per value), all current; the gate passes them without a warning (issue 30:
    no figure a rule rests on ended short of its target)."""
    assert len(list((ROOT / "reports").glob("*.json"))) == 25
    assert len(list((ROOT / "reports").glob("sweep-chain_kernels-*.json"))) == 1
    proc = _gate(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "25 certificates, 0 failed;" in proc.stdout.splitlines()[0]
    assert proc.stdout.rstrip().splitlines()[-1] == "gate: PASS (0 failed rule(s), 0 warning(s))"
