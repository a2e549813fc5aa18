"""Progress bars for long runs (verify, bench): rich, transient, with time left.

Run code never imports rich: it takes an optional `on_progress` callback (the Advance
protocol) and calls it as work completes. Commands make the callback with `progress()`.
No bar is drawn when stdout or stderr is not a terminal, when CI is set, or for TERM=dumb;
the callback is then a no-op. A worker of a several-GPU run (`--device all`) whose parent
draws the bars passes `events`: its progress then goes to the parent as typed events.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from rich.console import Console

from graphcert.cert.results.fleet import EventSink, ProgressEvent
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


def _events(total: float, send: EventSink) -> Advance:
    """The callback of a worker whose parent draws its bar: the total, then each advance."""
    send(ProgressEvent("total", float(total)))

    def advance(units: float = 1.0, description: str | None = None) -> None:
        send(ProgressEvent("advance", float(units)))

    return advance


@contextmanager
def progress(total: float, description: str, options: Options,
             events: EventSink | None = None, *,
             console: Console | None = None) -> Iterator[Advance]:
    """A transient bar of `total` units on stderr (`console`: the invocation's, else a plain
    one; where `options` allow bars); yields the callback that advances it. With `events` (a
    worker whose parent draws the bar) no bar: typed events go there."""
    if events is not None and total > 0:
        yield _events(total, events)
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

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                   console=console or Console(stderr=True), transient=True)
    with bar:
        task = bar.add_task(description, total=total)

        def advance(units: float = 1.0, description: str | None = None) -> None:
            if description is None:
                bar.advance(task, units)
            else:
                bar.update(task, advance=units, description=description)

        yield advance
