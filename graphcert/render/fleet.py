"""What a several-GPU run shows: a bar per GPU on a terminal, a line per GPU as it finishes,
each worker's output under its GPU, and the merged JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console

from graphcert.cert.results.fleet import FleetResult, Gpu, ProgressEvent, WorkerOutcome
from graphcert.options import Options
from graphcert.render.progress import bars_allowed

OnProgress = Callable[[Gpu, ProgressEvent], None]
OnDone = Callable[[WorkerOutcome], None]


def finished_line(w: WorkerOutcome) -> str:
    """One line for a worker that ended: its GPU, how, how long, and its error."""
    if w.ok:
        return f"{w.gpu.label}: done in {w.seconds:.1f} s"
    error = w.error.one_line() if w.error is not None else None
    return f"{w.gpu.label}: FAILED (exit {w.exit_code}) after {w.seconds:.1f} s: {error}"


def summary_line(result: FleetResult) -> str:
    ok = sum(1 for w in result.workers if w.ok)
    slowest = max((w.seconds for w in result.workers), default=0.0)
    return (f"{result.command} on {len(result.workers)} GPU(s): {ok} finished, "
            f"{len(result.workers) - ok} failed; wall {result.seconds:.1f} s "
            f"(slowest GPU {slowest:.1f} s); exit {result.exit_code}")


def merged_json(result: FleetResult) -> str:
    """The workers' --json outputs in one document, with each GPU and its exit code."""
    return json.dumps(result.to_json(), indent=2)


def _show(w: WorkerOutcome, as_json: bool, say: Callable[[str], None]) -> None:
    say(finished_line(w))
    for line in w.messages:  # the error is not among them: the worker replied with it
        if line.strip():
            say(f"[GPU {w.gpu.index}] {line}")
    if not as_json and w.stdout.strip():
        sys.stdout.write(f"== GPU {w.gpu.index}: {w.gpu.name} ({w.gpu.uuid}) ==\n{w.stdout}")
        if not w.stdout.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()


@contextmanager
def fleet_display(gpus: Sequence[Gpu], command: str, *, as_json: bool, options: Options,
                  console: Console | None = None
                  ) -> Iterator[tuple[OnProgress | None, OnDone, bool]]:
    """(on_progress, on_done, bars): bars per GPU on a terminal where `options` allow bars
    (on_progress None when none are drawn: workers then need not report progress)."""
    if not bars_allowed(options):
        def done_plain(w: WorkerOutcome) -> None:
            _show(w, as_json, lambda text: print(text, file=sys.stderr, flush=True))

        yield None, done_plain, False
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=console or Console(stderr=True), transient=True)
    with bar:
        tasks: dict[int, Any] = {g.index: bar.add_task(f"{command} GPU {g.index} {g.name}",
                                                       total=None) for g in gpus}

        def on_progress(gpu: Gpu, event: ProgressEvent) -> None:
            if event.what == "total":
                bar.update(tasks[gpu.index], total=event.units)
            else:
                bar.advance(tasks[gpu.index], event.units)

        def done(w: WorkerOutcome) -> None:
            bar.update(tasks[w.gpu.index], visible=False)
            _show(w, as_json, lambda text: bar.console.print(  # a line is never folded
                text, highlight=False, markup=False, soft_wrap=True))

        yield on_progress, done, True
