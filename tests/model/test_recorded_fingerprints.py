"""Every recorded graph keeps its fingerprints: tools/refingerprint.py fingerprints each
recorded snapshot again from a relabelled reader's graph (canonical labelling included) and
finds no difference, and no certificate's graph is large enough for twin splitting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_recorded_graph_fingerprints_to_its_recorded_hashes() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "refingerprint.py"),
                           "--seeds", "2"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "0 differences"
    assert sum(line.startswith("same ") for line in lines) >= 26  # fixtures and golden
    assert "0 could have twins split" in lines[-2]
