"""The graphcert command line. Commands load lazily so `--help` and `gate` start fast."""

from __future__ import annotations

import errno
import importlib
import importlib.util
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from graphcert import _interrupt
from graphcert._version import __version__
from graphcert.errors import WHAT_NEEDS_A_GPU, ExitStatus, GraphcertError

if TYPE_CHECKING:
    from graphcert.invocation import WorkerHooks

T = TypeVar("T")

# name -> (module holding a click command called `command`, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "env": ("graphcert.commands.env", "Driver, CUDA, library versions and every GPU."),
    "workloads": ("graphcert.commands.workloads", "List the workloads graphcert can run."),
    "capture": ("graphcert.commands.capture", "Capture a workload per class; save snapshots."),
    "inventory": ("graphcert.commands.inventory", "Show every node of a graph or saved snapshot."),
    "verify": ("graphcert.commands.verify", "Prove topology stability and update correctness."),
    "bench": ("graphcert.commands.bench", "Time graph launch against per-kernel launch."),
    "plan": ("graphcert.commands.plan", "Choose the capture sizes for a traffic mix."),
    "profile": ("graphcert.commands.profile", "Device time of every node of a replayed graph."),
    "gate": ("graphcert.commands.gate", "CI gate over certificates: policy and baseline."),
    "show": ("graphcert.commands.show", "Render one certificate."),
    "diff": ("graphcert.commands.diff", "Compare two snapshots or certificates."),
    "report": ("graphcert.commands.report", "One self-contained HTML report of certificates."),
    "record": ("graphcert.commands.record", "A running program's graphs: coverage and churn."),
}


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command runs."""

    def list_commands(self, context: click.Context) -> list[str]:
        return sorted(n for n in COMMANDS if _available(n))

    def get_command(self, context: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS or not _available(cmd_name):
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        command: click.Command = module.command
        return command

    def resolve_command(self, context: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        """An unknown command gets "did you mean ...?" from the closest command names."""
        name = click.utils.make_str(args[0]) if args else ""
        if args and not name.startswith("-") and self.get_command(context, name) is None:
            import difflib

            close = difflib.get_close_matches(name, self.list_commands(context), n=3, cutoff=0.6)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            context.fail(f"no such command '{name}'{hint}; 'graphcert --help' lists them")
        return super().resolve_command(context, args)

    def parse_args(self, context: click.Context, args: list[str]) -> list[str]:
        """No arguments at all is a request for help (as hatch answers it): the help on
        stdout, exit 0."""
        if not args and not context.resilient_parsing:
            click.echo(context.get_help(), color=context.color)
            context.exit(ExitStatus.OK)
        return super().parse_args(context, args)

    def format_commands(self, context: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(n, COMMANDS[n][1]) for n in self.list_commands(context)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, context: click.Context) -> object:
        return guarded(context, lambda: super(LazyGroup, self).invoke(context))


def guarded(context: click.Context, run: Callable[[], T]) -> T:
    """Run a command (`run`) as the command line does: a GraphcertError is one line on stderr
    (or the worker's typed reply) and its exit status, Ctrl-C is one line and exit 130, a
    missing third-party package is named with its fix, stdout that cannot take the output
    is one line (a closed pipe: a quiet exit)."""
    previous = None
    try:
        try:  # unwind_in_body inside the try: a SIGINT just after it is caught here too
            previous = _interrupt.unwind_in_body()
            return run()
        except ModuleNotFoundError as exc:
            raise _missing_dependency(exc) from exc
        finally:  # before the handlers below: Ctrl-C while printing is one line too
            _interrupt.restore(previous)
    except GraphcertError as exc:
        hooks = _hooks(context)
        if hooks is not None:  # a worker replies with the error, typed (graphcert.worker)
            hooks.on_error(exc)
        else:
            click.echo(f"graphcert: error: {exc.one_line()}", err=True)
        log = getattr(exc, "log", None)
        if log:
            click.echo(log.rstrip(), err=True)
        context.exit(exc.exit_code)
    except KeyboardInterrupt:
        _interrupted(context)
    except RuntimeError as exc:  # Python 3.11: Ctrl-C during a class's creation, wrapped
        if not _interrupt.caused_by_interrupt(exc):
            raise
        _interrupted(context)
    except (OSError, UnicodeEncodeError) as exc:
        status = stdout_failed(exc)
        if status is None:
            raise
        context.exit(status)


def _interrupted(context: click.Context) -> NoReturn:
    click.echo("graphcert: interrupted", err=True)
    if _interrupt.installed():  # the command line itself (not a test's runner)
        _interrupt.leave()
    context.exit(ExitStatus.INTERRUPTED)


# the errors a write to a file or device can meet (a failed write loses what it held, so
# stdout cannot be asked again: a flush after it succeeds)
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def stdout_failed(exc: BaseException) -> int | None:
    """The exit status when `exc` is stdout refusing the output, after saying so (None when
    it is something else: a worker's pipe, another file). A closed pipe is the reader's
    choice (`| head`): no message, ExitStatus.PIPE_CLOSED. A full disk, an I/O error or
    text the stream's encoding cannot hold: one line on stderr, exit 2. Either way stdout
    then points at /dev/null, so the flush at exit cannot raise again."""
    import sys

    stdout = sys.stdout
    if isinstance(exc, BrokenPipeError):
        if not _reader_gone(stdout):
            return None
        _stdout_to_devnull()
        return ExitStatus.PIPE_CLOSED
    if isinstance(exc, UnicodeEncodeError):
        if not _same_codec(exc.encoding, getattr(stdout, "encoding", None)):
            return None
        why = (f"the output holds {exc.object[exc.start:exc.end]!a}, which this stdout's "
               f"encoding ({exc.encoding}) cannot write (set PYTHONIOENCODING=utf-8)")
    elif isinstance(exc, OSError) and exc.errno in _WRITE_ERRNOS and exc.filename is None:
        # graphcert's own files are written through fileio, which names them (InputError);
        # an error with no file name on the way out of a command is a stream's
        why = os.strerror(exc.errno)
    else:
        return None
    _stdout_to_devnull()
    try:
        click.echo(f"graphcert: error: cannot write the output to stdout: {why}", err=True)
    except (OSError, ValueError):
        pass
    return ExitStatus.UNUSABLE


def _reader_gone(stream: Any) -> bool:
    """Whether `stream`'s pipe has lost its reader: poll reports an error on the write end
    (a BrokenPipeError from a worker's pipe leaves stdout's fine)."""
    import select

    poll = getattr(select, "poll", None)
    if poll is None:  # no poll here: a broken pipe is most likely stdout's
        return True
    try:
        poller = poll()
        poller.register(stream.fileno(), select.POLLOUT)
        return any(event & (select.POLLERR | select.POLLHUP) for _, event in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _same_codec(one: str | None, other: str | None) -> bool:
    import codecs

    try:
        return one is not None and other is not None and \
            codecs.lookup(one).name == codecs.lookup(other).name
    except LookupError:
        return False


def _stdout_to_devnull() -> None:
    import sys

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # no real stdout (a test's runner)
        pass


def _hooks(context: click.Context) -> WorkerHooks | None:
    """The worker hooks of this run's invocation (None on the command line)."""
    from graphcert.invocation import Invocation

    found = context.find_object(Invocation)
    return found.hooks if found is not None else None


def _missing_dependency(exc: ModuleNotFoundError) -> Exception:
    """A third-party package graphcert needs is absent: one line naming it and the fix."""
    package = (exc.name or "").split(".")[0]
    if not package or package == "graphcert":
        return exc
    return GraphcertError(f"the Python package '{package}' is not installed",
                          hint="install graphcert with its dependencies as the README says: "
                               "pip install '.[test]'")


def _available(name: str) -> bool:
    """A command is listed once its module exists in this build."""
    module = COMMANDS[name][0]
    return importlib.util.find_spec(module) is not None


_HELP = f"Profile and certify CUDA Graphs.\n\n{WHAT_NEEDS_A_GPU[:1].upper()}{WHAT_NEEDS_A_GPU[1:]}."


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             help=_HELP)
@click.version_option(__version__, prog_name="graphcert")
@click.pass_context
def cli(context: click.Context) -> None:
    """Profile and certify CUDA Graphs (the help text says which commands need a GPU)."""
    # The edge: the process environment is read here, once, into the invocation the command
    # is given (a worker passes its own, with its hooks, as the context object).
    from graphcert.invocation import Invocation

    if not isinstance(context.obj, Invocation):
        context.obj = Invocation.from_environ(os.environ)


def main() -> None:
    """Console-script entry point (graphcert.__main__.main installs the Ctrl-C handler
    earlier, before click is imported; this covers an entry point that starts here)."""
    import sys

    _interrupt.install()
    try:
        try:
            cli(prog_name="graphcert")
        finally:  # what is still buffered fails here, not in Python's flush at exit
            sys.stdout.flush()
    except (OSError, UnicodeEncodeError) as exc:
        status = stdout_failed(exc)
        if status is None:
            raise
        sys.exit(status)
