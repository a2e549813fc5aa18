"""Consoles: data to stdout, messages to stderr; colour follows the environment (bars: see
render/progress.py)."""

from __future__ import annotations

import os
import sys
from functools import cache
from typing import Any

from rich.console import Console
from rich.measure import Measurement

# Wide enough for any row graphcert prints; measuring is clamped to the console's width.
_UNBOUNDED = 1 << 16


class DataConsole(Console):
    """A console for data. On a terminal it wraps to the terminal as rich does; piped or
    redirected it never folds a token (a path, a hash) onto two lines: each print is laid
    out at max(COLUMNS if set, the widest row it holds)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: D102 - as Console.print
        if self.is_terminal or not objects or kwargs.get("width") is not None:
            super().print(*objects, **kwargs)
            return
        base = _columns()
        options = self.options.update(max_width=_UNBOUNDED)
        widest = max(Measurement.get(self, options, o).maximum for o in objects)
        saved = self._width  # None: rich re-reads COLUMNS each time; keep it that way
        self.width = max(base, widest + (len(objects) - 1), 1)
        try:
            super().print(*objects, **kwargs)
        finally:
            self._width = saved


def _columns() -> int:
    """COLUMNS when it is a positive integer, else 0 (the content's own width)."""
    try:
        return max(int(os.environ.get("COLUMNS", "")), 0)
    except ValueError:
        return 0


@cache
def stdout_console() -> Console:
    """The console for data. rich itself honours NO_COLOR, FORCE_COLOR and COLUMNS."""
    return DataConsole(soft_wrap=False, highlight=False)


@cache
def stderr_console() -> Console:
    """The console for messages and progress: laid out like stdout's when not a terminal, so
    a certificate's path in a message is never split across lines either."""
    return DataConsole(stderr=True, soft_wrap=False, highlight=False)


def print_json(text: str) -> None:
    """Write JSON to stdout unchanged (no rich markup, no wrapping)."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
