"""Helpers the fuzz tests and their benchmark scripts share: the field paths of a JSON
document, and what makes a CLI result clean (a verdict, or error lines with exit 2, never
a traceback)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from click.testing import Result


def field_paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into `doc` (keys and list indices), the document itself first."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from field_paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from field_paths(v, (*prefix, i))


def unclean(result: Result, ok: tuple[int, ...] = (0, 1), *, one_line: bool = False
            ) -> str | None:
    """Why `result` is not a clean answer, or None: an exit code in `ok` (a verdict), or
    exit 2 with error lines (with `one_line`, exactly one 'graphcert: error:' line)."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return f"raised {result.exception!r}"
    if "Traceback" in result.output:
        return "printed a traceback"
    if result.exit_code != 2:
        return None if result.exit_code in ok else f"exit {result.exit_code}"
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    if one_line:
        if len(lines) != 1 or not lines[0].startswith("graphcert: error: "):
            return f"exit 2 with {len(lines)} line(s) on stderr: {lines[:3]}"
        return None
    if not lines or not all(ln.startswith(("graphcert: error:", "Usage:", "Try ", "Error:"))
                            or ln.startswith("  ") for ln in lines):
        return f"exit 2 with unexpected lines: {lines[:3]}"
    return None


def assert_clean(result: Result, ok: tuple[int, ...] = (0, 1), *, one_line: bool = False
                 ) -> None:
    """A result (exit in `ok`) or error lines naming the problem with exit 2; no traceback."""
    problem = unclean(result, ok, one_line=one_line)
    assert problem is None, (problem, result.output[-2000:])
