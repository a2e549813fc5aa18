"""`python -m graphcert.worker --events FD --reply FD`: a worker process (the protocol is in
graphcert.run.worker). It reads its JSON job on stdin; a command job runs a graphcert
command as the command line would, on the job's GPU, with its progress sent as typed events
and its error sent back typed in the reply instead of printed; a bench job benches in this
process's fresh context.

Beside graphcert.cli at the top: a command job needs the command line's own commands. Like
the command line, this is where a run starts: the worker's environment is read here, once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphcert import _interrupt

if TYPE_CHECKING:
    import click

    from graphcert.cert.results.fleet import EventSink
    from graphcert.run.worker import CommandJob


def run_command(job: CommandJob, events: EventSink | None) -> int:
    """Run the job's command with its parameters on its GPU, as graphcert's CLI runs it;
    its exit status. A GraphcertError is raised for the reply, not printed (a compiler log
    that comes with it is still printed, as the command line prints it)."""
    import os

    import click

    from graphcert.cli import cli, guarded
    from graphcert.errors import ExitStatus, GraphcertError
    from graphcert.invocation import Invocation, WorkerHooks

    errors: list[GraphcertError] = []
    hooks = WorkerHooks(errors.append, events, job.uuid_names)
    invocation = Invocation.from_environ(os.environ, hooks=hooks)
    try:
        with click.Context(cli, info_name="graphcert", obj=invocation) as root:
            command = cli.get_command(root, job.command)
            if command is None:
                raise GraphcertError(f"a worker job names no command {job.command!r}",
                                     exit_code=ExitStatus.UNUSABLE)
            with click.Context(command, parent=root, info_name=job.command) as ctx:
                guarded(ctx, lambda: _invoke(ctx, command, job))
        status = int(ExitStatus.OK)
    except click.exceptions.Exit as exc:
        status = exc.exit_code
    except click.ClickException as exc:  # the parent parsed the same values first: rare
        raise GraphcertError(exc.format_message(), exit_code=exc.exit_code) from None
    if errors:
        raise errors[0]
    return status


def _invoke(ctx: click.Context, command: click.Command, job: CommandJob) -> None:
    """Each parameter as the parser would hand it over (converted, checked, its callback
    run: the device resolved, the signing key loaded), then the command's body."""
    given = {**job.params, "device": str(job.device), "signing_key_file": job.key_file}
    for param in command.get_params(ctx):
        if param.name is None or param.name == "help":
            continue
        value = given.get(param.name)
        opts = {param.name: list(value) if isinstance(value, tuple) else value} \
            if value is not None else {}
        param.handle_parse_result(ctx, opts, [])
    command.invoke(ctx)


def main() -> None:
    """The worker's entry point: the Ctrl-C handler first, as `python -m graphcert`."""
    _interrupt.install()
    import sys

    from graphcert.run.worker import serve

    sys.exit(serve(sys.argv[1:], run_command))


if __name__ == "__main__":
    main()
