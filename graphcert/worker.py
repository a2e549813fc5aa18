"""`python -m graphcert.worker --events FD --reply FD`: a worker process (the protocol is in
graphcert.run.worker). It reads its JSON job on stdin; a command job runs a graphcert
command as the command line would, on the job's GPU, with its progress sent as typed events
and its error sent back typed in the reply instead of printed; a bench job benches in this
process's fresh context.

Beside graphcert.cli at the top: a command job needs the command line's own commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphcert import _interrupt

if TYPE_CHECKING:
    from graphcert.cert.results.fleet import EventSink
    from graphcert.run.worker import CommandJob


def run_command(job: CommandJob, events: EventSink | None) -> int:
    """Run the job's command line (with its --device) through graphcert's CLI; its exit
    status. A GraphcertError is raised for the reply, not printed (a compiler log that
    comes with it is still printed, as the command line prints it)."""
    import click

    from graphcert.cli import cli
    from graphcert.commands._options import WORKER_KEY, WorkerHooks
    from graphcert.errors import ExitStatus, GraphcertError

    errors: list[GraphcertError] = []
    hooks = WorkerHooks(errors.append, events, job.uuid_names)
    try:
        with cli.make_context("graphcert", job.command_line()) as ctx:
            ctx.meta[WORKER_KEY] = hooks
            cli.invoke(ctx)
        status = int(ExitStatus.OK)
    except click.exceptions.Exit as exc:
        status = exc.exit_code
    except click.ClickException as exc:  # the parent parsed the same line first: rare
        raise GraphcertError(exc.format_message(), exit_code=exc.exit_code) from None
    if errors:
        raise errors[0]
    return status


def main() -> None:
    """The worker's entry point: the Ctrl-C handler first, as `python -m graphcert`."""
    _interrupt.install()
    import sys

    from graphcert.run.worker import serve

    sys.exit(serve(sys.argv[1:], run_command))


if __name__ == "__main__":
    main()
