"""Consoles: data to stdout, messages to stderr.

Colour and layout are separate decisions. Colour follows the environment as rich
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
from typing import IO, Literal

from rich.console import (
    Console,
    ConsoleRenderable,
    JustifyMethod,
    OverflowMethod,
    RenderableType,
    RichCast,
)
from rich.errors import NotRenderableError
from rich.measure import Measurement
from rich.style import Style
from rich.text import Text

from graphcert.render.words import Prose

# rich's colour systems (its Console takes them as text).
ColorSystem = Literal["auto", "standard", "256", "truecolor", "windows"]

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

    def __init__(self, *, file: IO[str] | None = None, stderr: bool = False,
                 width: int | None = None, color_system: ColorSystem | None = "auto",
                 force_terminal: bool | None = None, highlight: bool = True,
                 soft_wrap: bool = False, legacy_windows: bool | None = None,
                 tty: bool | None = None, _environ: Mapping[str, str] | None = None) -> None:
        """rich's Console keywords that graphcert passes, with rich's defaults; `tty`: lay
        output out as on a terminal (True) or not (False) whatever the stream is."""
        super().__init__(file=file, stderr=stderr, width=width, color_system=color_system,
                         force_terminal=force_terminal, highlight=highlight,
                         soft_wrap=soft_wrap, legacy_windows=legacy_windows,
                         _environ=_environ)
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

    def print(self, *objects: object, sep: str = " ", end: str = "\n",  # noqa: D102
              style: str | Style | None = None, justify: JustifyMethod | None = None,
              overflow: OverflowMethod | None = None, no_wrap: bool | None = None,
              emoji: bool | None = None, markup: bool | None = None,
              highlight: bool | None = None, width: int | None = None,
              height: int | None = None, crop: bool = False, soft_wrap: bool | None = None,
              new_line_start: bool = False) -> None:
        # As Console.print, with rich's keywords and defaults, except `crop`: False, so that
        # a token wider than the terminal stays whole.
        if len(objects) == 1 and isinstance(objects[0], (str, Text)) and not soft_wrap:
            text = objects[0]
            if isinstance(text, str):
                text = self.render_str(text, markup=markup, highlight=highlight)
            # markup, highlight and style are spent on the Prose: rich is given its defaults
            objects = (Prose(text, style=style or ""),)
            style = markup = highlight = None

        def to_rich() -> None:
            super(DataConsole, self).print(
                *objects, sep=sep, end=end, style=style, justify=justify, overflow=overflow,
                no_wrap=no_wrap, emoji=emoji, markup=markup, highlight=highlight,
                width=width, height=height, crop=crop, soft_wrap=soft_wrap,
                new_line_start=new_line_start)

        if self.on_terminal or not objects or width is not None:
            to_rich()
            return
        base = self._columns
        options = self.options.update(max_width=_UNBOUNDED)
        widest = max(Measurement.get(self, options, _measurable(o)).maximum for o in objects)
        saved = self._width
        self.width = max(base, widest + (len(objects) - 1), 1)
        try:
            to_rich()
        finally:
            self._width = saved


def _measurable(value: object) -> RenderableType:
    """`value` as what Measurement.get takes; anything else fails as Measurement.get fails
    on it (a piped print measures each object before rich prints it)."""
    if isinstance(value, (str, ConsoleRenderable, RichCast)):
        return value
    raise NotRenderableError(f"Unable to get render width for {value!r}; a str, Segment, or "
                             "object with __rich_console__ method is required")


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
