"""The committed reference reports pass the gate, and go stale when a kernel changes."""

from __future__ import annotations

import os
import shutil
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
    assert len(list((ROOT / "reports").glob("*.json"))) == 14
    proc = _gate(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS: 14 certificates, 0 failed" in proc.stdout + proc.stderr


def test_changed_kernel_without_recertifying_is_stale(tmp_path: Path) -> None:
    copy = tmp_path / "tree"
    for part in ("graphcert", "kernels", "reports"):
        shutil.copytree(ROOT / part, copy / part,
                        ignore=shutil.ignore_patterns("__pycache__", "_kernels"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    assert _gate(copy).returncode == 0  # the copy itself is fine
    scan = copy / "kernels" / "scan.cu"
    scan.write_text(scan.read_text() + "\n// an edit nobody re-certified\n")
    proc = _gate(copy)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "stale" in proc.stderr and "scan" in proc.stderr
    assert "re-run" in proc.stderr
