"""Where graphcert finds its kernels and keeps its cache. Pure."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def kernels_dir() -> Path:
    """kernels/ inside an installed wheel (graphcert/_kernels) or at a checkout's top."""
    for candidate in (_PACKAGE / "_kernels", _PACKAGE.parent / "kernels"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"graphcert's kernels/ folder is missing (looked in {_PACKAGE / '_kernels'} and "
        f"{_PACKAGE.parent / 'kernels'}); reinstall graphcert"
    )


def cache_dir() -> Path:
    """The cubin cache: $GRAPHCERT_CACHE, else the user's cache dir (XDG on Linux)."""
    override = os.environ.get("GRAPHCERT_CACHE")
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "graphcert"
