"""The committed reference reports pass the gate, and go stale when a kernel changes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _gate(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run([sys.executable, "-m", "graphcert", "gate", "reports/"], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)


# strict: once reports/ is re-certified on the GPU this XPASSes and fails, so the marker
# must then be removed.
@pytest.mark.xfail(strict=True, reason="reports/ predate schema 2 (method digest, source digest "
                                       "over imports and headers); re-certify on the GPU")
def test_reference_reports_pass_the_gate() -> None:
    assert len(list((ROOT / "reports").glob("*.json"))) == 14
    proc = _gate(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS: 14 certificates, 0 failed" in proc.stdout + proc.stderr
