"""The environment for tests that run graphcert in a child process."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child_env(**extra: str) -> dict[str, str]:
    """os.environ with this checkout first on PYTHONPATH; what was on it stays (a machine
    may put graphcert's dependencies there rather than in site-packages)."""
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "PYTHONPATH": path, **extra}


def committed_report(kind: str, workload: str) -> Path:
    """The one certificate of `kind` for `workload` committed under reports/ (whatever GPU
    recorded it). The CI gate requires it, so a missing one fails the test, never skips."""
    found = sorted((ROOT / "reports").glob(f"{kind}-{workload}-*.json"))
    assert len(found) == 1, f"want one reports/{kind}-{workload}-*.json, found {found}"
    return found[0]
