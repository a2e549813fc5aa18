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
