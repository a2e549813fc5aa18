"""Progress bars for long runs (verify, bench): rich, transient, with time left.

Run code never imports rich: it takes an optional `on_progress` callback (the Advance
protocol) and calls it as work completes. Commands make the callback with `progress()`.
No bar is drawn when stdout or stderr is not a terminal, when CI is set, or for TERM=dumb;
the callback is then a no-op. A worker of a several-GPU run (`--device all`) whose parent
draws the bars writes its progress as lines on stderr instead (GRAPHCERT_PROGRESS_LINES).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from graphcert.cert.results.fleet import PROGRESS_ENV, PROGRESS_PREFIX
from graphcert.options import Options


class Advance(Protocol):
    """What run code calls: `advance(units, description=None)`."""

    def __call__(self, units: float = 1.0, description: str | None = None) -> None: ...


def bars_allowed(options: Options) -> bool:
    """Bars only when both streams are terminals, CI is unset, and the terminal is not dumb."""
    return (sys.stdout.isatty() and sys.stderr.isatty() and not options.ci
            and not options.dumb_terminal)


def _nothing(units: float = 1.0, description: str | None = None) -> None:
    """The callback when no bar is shown."""


def _progress_lines(total: float) -> Advance:
    """The callback of a worker whose parent draws its bar: one line per step on stderr."""
    def write(line: str) -> None:
        sys.stderr.write(f"{PROGRESS_PREFIX} {line}\n")
        sys.stderr.flush()

    write(f"total {total:g}")

    def advance(units: float = 1.0, description: str | None = None) -> None:
        write(f"advance {units:g}")

    return advance


@contextmanager
def progress(total: float, description: str, options: Options) -> Iterator[Advance]:
    """A transient bar of `total` units on stderr (where `options` allow bars); yields the
    callback that advances it."""
    if os.environ.get(PROGRESS_ENV) == "1" and total > 0:
        yield _progress_lines(total)
        return
    if not bars_allowed(options) or total <= 0:
        yield _nothing
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from graphcert.render.console import stderr_console

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                   console=stderr_console(), transient=True)
    with bar:
        task = bar.add_task(description, total=total)

        def advance(units: float = 1.0, description: str | None = None) -> None:
            if description is None:
                bar.advance(task, units)
            else:
                bar.update(task, advance=units, description=description)

        yield advance
