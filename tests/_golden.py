"""Golden files: the exact text a view must print. GRAPHCERT_UPDATE_GOLDEN=1 writes them
instead (read the diff before committing)."""

from __future__ import annotations

import os
from pathlib import Path


def check_golden(path: Path, text: str) -> None:
    """`text` is the golden file at `path` (written first when asked to update)."""
    if os.environ.get("GRAPHCERT_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run with GRAPHCERT_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} differs from its golden"
