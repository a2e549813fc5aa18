"""Consoles: data to stdout, messages to stderr.

Colour and layout are separate decisions (issue 34). Colour follows the environment as rich
reads it (FORCE_COLOR, NO_COLOR, TTY_COMPATIBLE, else whether the stream is a terminal).
Layout follows only whether the stream really is a terminal: on one, output fits its width
and tables change layout to fit (render/layout.py); piped or redirected, coloured or not,
each print is laid out at max(COLUMNS if set, its widest row), so no token is ever folded.
Free text is wrapped at spaces only, and no line ends with spaces (bars: render/progress.py).
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Mapping
from typing import IO, Any

from rich.console import Console
from rich.measure import Measurement
from rich.text import Text

from graphcert.render.words import Prose

# Wide enough for any row graphcert prints; measuring is clamped to the console's width.
_UNBOUNDED = 1 << 16


def isatty(stream: IO[str]) -> bool:
    """Whether `stream` is a terminal (False for a closed or odd stream). Tests replace it
    to lay output out as a terminal would."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def colour_wanted(environ: Mapping[str, str], tty: bool) -> bool:
    """Whether to write colour codes, in rich's own order: TTY_COMPATIBLE, FORCE_COLOR (any
    non-empty value), else whether the stream is a terminal. NO_COLOR is rich's: it keeps
    bold and italic and drops the colours."""
    compatible = environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = environ.get("FORCE_COLOR")
    return force != "" if force is not None else tty


class DataConsole(Console):
    """A console for data and messages whose layout depends on `on_terminal`, never on
    colour. A str or Text printed alone is free text (layout.Prose): wrapped at spaces."""

    def __init__(self, *args: Any, tty: bool | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tty = tty
        # COLUMNS from the environment rich was given (the invocation's; rich's default else)
        self._columns = columns_of(self._environ)

    def on_broken_pipe(self) -> None:
        """The reader closed the pipe (`| head`): raised on to graphcert.cli, which answers
        it as for any other write to stdout (a quiet exit 141); rich's default exits 1,
        which reads as a failed gate."""
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    @property
    def on_terminal(self) -> bool:
        """Whether output is laid out for a terminal: the `tty` given, else the stream's."""
        return isatty(self.file) if self._tty is None else self._tty

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: D102 - as Console.print
        if len(objects) == 1 and isinstance(objects[0], (str, Text)) \
                and not kwargs.get("soft_wrap"):
            text = objects[0]
            if isinstance(text, str):
                text = self.render_str(text, markup=kwargs.pop("markup", None),
                                       highlight=kwargs.pop("highlight", None))
            objects = (Prose(text, style=kwargs.pop("style", "") or ""),)
        kwargs.setdefault("crop", False)  # a token wider than the terminal stays whole
        if self.on_terminal or not objects or kwargs.get("width") is not None:
            super().print(*objects, **kwargs)
            return
        base = self._columns
        options = self.options.update(max_width=_UNBOUNDED)
        widest = max(Measurement.get(self, options, o).maximum for o in objects)
        saved = self._width
        self.width = max(base, widest + (len(objects) - 1), 1)
        try:
            super().print(*objects, **kwargs)
        finally:
            self._width = saved


def columns_of(environ: Mapping[str, str]) -> int:
    """COLUMNS when it is a positive integer, else 0 (the content's own width)."""
    try:
        return max(int(environ.get("COLUMNS", "")), 0)
    except ValueError:
        return 0


def data_console(*, stderr: bool = False, environ: Mapping[str, str]) -> DataConsole:
    """A console for stdout (or stderr; messages and progress, laid out as stdout's, so a
    certificate's path in a message is never split) as `environ` (the invocation's, read
    once) and the stream ask: colour from colour_wanted, layout from isatty. rich reads
    NO_COLOR and COLUMNS itself."""
    stream = sys.stderr if stderr else sys.stdout
    tty = isatty(stream)
    return DataConsole(stderr=stderr, soft_wrap=False, highlight=False,
                       force_terminal=colour_wanted(environ, tty), tty=tty,
                       _environ=environ)


def print_json(text: str) -> None:
    """Write JSON to stdout unchanged (no rich markup, no wrapping)."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
