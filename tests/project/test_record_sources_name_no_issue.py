"""The sources of the record method (METHOD_FILES["record"]), its example workloads and the
CUPTI package's docstring say what they do, not which issue asked for it (an issue number
means nothing to a reader of the code)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphcert.cert.digests import METHOD_FILES

ROOT = Path(__file__).resolve().parents[2]
ISSUE = re.compile(r"\bissues? \d+", re.IGNORECASE)
FILES = sorted({*(ROOT / "graphcert" / path for where, path in METHOD_FILES["record"]
                  if where == "pkg"),
                *(ROOT / "examples/record").glob("*.py"),
                ROOT / "graphcert/cupti/__init__.py"})


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_issue_number(path: Path) -> None:
    found = [f"{n}: {line.strip()}" for n, line in
             enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if ISSUE.search(line)]
    assert found == []
