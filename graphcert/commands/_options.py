"""Options shared by commands that run on a GPU, the one rule for $GRAPHCERT_DEVICE, the one
number type every numeric option uses, what a worker tells the command it runs, and the
invocation's graphcert.options.Options: the environment is read here, at the edge, and
passed down."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from graphcert.errors import GraphcertError, InputError
from graphcert.options import DEVICE_ENV, Options

if TYPE_CHECKING:
    from graphcert.cert.results.fleet import EventSink

# The click context's meta holds a WorkerHooks here while a worker runs a command.
WORKER_KEY = "graphcert.worker"


@dataclass(frozen=True)
class WorkerHooks:
    """What a worker (graphcert.worker) tells the command it runs, from its job: who takes
    the command's error (the worker replies with it, typed, instead of a printed line), where
    progress goes (None: nowhere), how certificates are named (see CommandJob.uuid_names)."""

    on_error: Callable[[GraphcertError], None]
    events: EventSink | None = None
    uuid_names: bool | None = None


def worker_hooks(ctx: click.Context | None = None) -> WorkerHooks | None:
    """The hooks of the worker running this command; None on the command line."""
    ctx = ctx if ctx is not None else click.get_current_context(silent=True)
    hooks = ctx.meta.get(WORKER_KEY) if ctx is not None else None
    return hooks if isinstance(hooks, WorkerHooks) else None


def progress_events() -> EventSink | None:
    """Where this command's progress events go: its worker's parent, when it draws bars."""
    hooks = worker_hooks()
    return hooks.events if hooks is not None else None


def uuid_names() -> bool | None:
    """Whether certificate names carry the GPU's short UUID, as this command's worker job
    says; None on the command line (Options.uuid_names, from $GRAPHCERT_CERT_NAME, decides)."""
    hooks = worker_hooks()
    return hooks.uuid_names if hooks is not None else None


def cli_options(ctx: click.Context | None = None) -> Options:
    """The invocation's Options: read from the environment the first time a command asks
    (without a signing key: --signing-key-file's callback loads it where certificates are
    written), then kept in the context's `obj` for the rest of the command."""
    ctx = ctx or click.get_current_context()
    found = ctx.find_object(Options)
    if found is None:
        found = ctx.obj = Options.from_environ(os.environ, signing=False)
    return found


class PathParam(click.Path):
    """click.Path for every path a command takes: an empty one is refused (click reads ''
    as the current folder, so `gate ''` gated it), and click's own refusals (a folder
    given where a file belongs) are one line, exit 2, like every other bad input."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        label = _label(param)
        if isinstance(value, (str, bytes)) and not value:
            raise InputError(f"{label} is an empty path", hint="give a file or folder path")
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            raise InputError(f"{label}: {' '.join(exc.message.split())}") from None


def _label(param: click.Parameter | None) -> str:
    """How a message names a parameter: `--junit`, or `PATHS` for an argument."""
    if isinstance(param, click.Option):
        return param.opts[0]
    return param.human_readable_name if param is not None else "a path"


_MAX_DEVICE_DIGITS = 6
_MAX_NUMBER_CHARS = 40  # a longer literal is refused before it is converted
# The longest any one timing option may ask for: bounded, so a typo (1e300) cannot make a
# run that never ends, and long enough for any real measurement.
MAX_SECONDS = 3600


class Bounded(click.FloatRange):
    """A finite integer or float in [low, high] (above `low` with low_open), checked while
    the command line is parsed, so a bad value is one line (InputError, exit 2) before any
    GPU or driver call. click's FloatRange lets NaN through (it compares false with both
    bounds) and inf wherever no maximum is set, and its errors are four lines of usage;
    this keeps its range shown in --help."""

    def __init__(self, kind: type[int] | type[float], low: float, high: float, *,
                 low_open: bool = False, unit: str | None = None):
        super().__init__(min=low, max=high, min_open=low_open)
        self.kind = kind
        self.name = "integer" if kind is int else "float"
        self.unit = unit or ("an integer" if kind is int else "a number")

    def wanted(self) -> str:
        """What a valid value is, for the message: 'seconds from 0.01 to 3600'."""
        low, high = (f"{b:.0f}" if self.kind is int else f"{b:g}" for b in (self.min, self.max))
        if self.min_open:
            return f"{self.unit} above {low}, at most {high}"
        return f"{self.unit} from {low} to {high}"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        label = max(param.opts, key=len) if param is not None and param.opts else "value"
        return self.check(value, label)

    def check(self, value: object, label: str) -> int | float:
        """`value` (text or a number) as `kind`, or InputError naming `label`."""
        shown = value.strip() if isinstance(value, str) else repr(value)
        if len(shown) > _MAX_NUMBER_CHARS:
            shown = shown[:_MAX_NUMBER_CHARS] + "..."
        quoted = repr(shown) if isinstance(value, str) else shown  # what was typed, quoted

        def refused(why: str) -> InputError:
            return InputError(f"{label} {why}", hint=f"give {self.wanted()}")

        noun = "an integer" if self.kind is int else "a number"
        if isinstance(value, str) and len(value.strip()) <= _MAX_NUMBER_CHARS:
            given: str | int | float = value.strip()
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and \
                (self.kind is float or isinstance(value, int)):
            given = value
        else:
            raise refused(f"{quoted} is not {noun}")
        try:
            number = self.kind(given)
        except (ValueError, OverflowError):
            raise refused(f"{quoted} is not {noun}") from None
        if not math.isfinite(number):
            raise refused(f"{shown} is not a finite number")
        assert self.min is not None and self.max is not None  # set by __init__
        if number < self.min or number > self.max or (self.min_open and number == self.min):
            raise refused(f"{shown} is out of range")
        return number


def resolve_device(option: int | None, options: Options) -> int:
    """The device index: --device when given, else $GRAPHCERT_DEVICE (`options.device`),
    else 0.

    The one rule everywhere: only a command that needs a GPU calls this, so a bad variable
    is an error naming it (exit 2) there, and is ignored by commands that need no device
    (inventory of a snapshot file, gate, show, diff)."""
    if option is not None:
        return option
    raw = options.device
    if not raw:
        return 0
    if not (raw.isascii() and raw.isdigit()) or len(raw) > _MAX_DEVICE_DIGITS:
        raise InputError(f"${DEVICE_ENV}={raw[:40]!r} is not a device index",
                         hint=f"set {DEVICE_ENV} to a number such as 0 (see `graphcert env`), "
                              f"or unset it")
    return int(raw)


@dataclass(frozen=True)
class DeviceSet:
    """Several GPUs asked for (`--device all` or `--device 0,2`): one worker per GPU.
    `indices` None means every GPU; the list is checked against the machine before work."""

    indices: tuple[int, ...] | None
    text: str

    def __str__(self) -> str:
        return self.text


def parse_devices(raw: str, source: str = "--device") -> int | DeviceSet:
    """`N` (one GPU, as today), `all`, or a comma list `0,2` (each index once)."""
    text = raw.strip()
    if text.lower() == "all":
        return DeviceSet(None, "all")
    parts = [p.strip() for p in text.split(",")]
    if not text or not all(p.isascii() and p.isdigit() and len(p) <= _MAX_DEVICE_DIGITS
                           for p in parts):
        raise InputError(f"{source}={raw[:40]!r} is not a device index, a list or 'all'",
                         hint="give a number such as 0, a list such as 0,2, or all "
                              "(see `graphcert env`)")
    indices = tuple(int(p) for p in parts)
    if len(set(indices)) != len(indices):
        raise InputError(f"{source}={raw[:40]!r} names a device twice",
                         hint="name each device once, e.g. 0,2")
    if len(indices) == 1 and "," not in text:
        return indices[0]
    return DeviceSet(indices, ",".join(map(str, indices)))


def resolve_devices(option: str | None, options: Options) -> int | DeviceSet:
    """--device when given, else $GRAPHCERT_DEVICE (`options.device`), else 0; either may
    name several GPUs."""
    if option is not None:
        return parse_devices(option)
    raw = options.device
    if not raw:
        return 0
    try:
        return parse_devices(raw, f"${DEVICE_ENV}")
    except InputError:
        raise InputError(f"${DEVICE_ENV}={raw[:40]!r} is not a device index",
                         hint=f"set {DEVICE_ENV} to a number such as 0, a list such as 0,2, "
                              f"or all (see `graphcert env`), or unset it") from None


def _device_now(ctx: click.Context, param: click.Parameter, value: str | None
                ) -> int | DeviceSet:
    return resolve_devices(value, cli_options(ctx))


def _one_device(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    """--device N as given (None when not): one GPU. $GRAPHCERT_DEVICE is read later, by
    resolve_device, and only where a GPU is needed."""
    if value is None:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit() and len(text) <= _MAX_DEVICE_DIGITS:
        return int(text)
    if text.lower() == "all" or "," in text:
        raise InputError(f"--device={value[:40]!r} names several GPUs; "
                         f"{ctx.info_name or 'this command'} runs on one",
                         hint="give one index such as --device 0 (see `graphcert env`)")
    raise InputError(f"--device={value[:40]!r} is not a device index",
                     hint="give a number such as 0 (see `graphcert env`)")


_DEVICE_HELP = "CUDA device index (see `graphcert env`)"


def _device(fn: Callable[..., Any], metavar: str, callback: Callable[..., Any],
            help_text: str) -> Callable[..., Any]:
    """The one --device option: one name, one parser (parse_devices), one default shown."""
    return click.option("--device", "device", default=None, metavar=metavar,
                        callback=callback, show_default=f"${DEVICE_ENV} or 0",
                        help=help_text)(fn)


def device_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--device for commands that always need a GPU (resolved while parsing): an index, or
    `all` / `0,2` for one worker process per GPU (see graphcert.commands._fleet)."""
    return _device(fn, "N|all|N,M", _device_now,
                   f"{_DEVICE_HELP}, `all`, or a list such as 0,2 (one worker process per "
                   "GPU).")


def single_device_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The same --device for a command that runs on one GPU, and only sometimes (inventory
    of a workload, not of a file): it gets None when not given, and calls resolve_device
    only when it needs a device, so a bad $GRAPHCERT_DEVICE never fails `inventory FILE`."""
    return _device(fn, "N", _one_device,
                   f"{_DEVICE_HELP}; used only when a workload is captured.")


def _signing_key(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    """Load the signing key before any GPU work (a bad one is exit 2 here) into the
    invocation's Options, which carry it to the certificate writer."""
    options = Options.from_environ(os.environ, key_file=value)
    for line in options.warnings:
        click.echo(f"graphcert: warning: {line}", err=True)
    ctx.obj = options


def signing_key_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--signing-key-file for commands that write certificates."""
    return click.option("--signing-key-file", type=PathParam(path_type=Path), default=None,
                        expose_value=False, callback=_signing_key,
                        help="Sign certificates with this key (HMAC-SHA256); default "
                             "$GRAPHCERT_SIGNING_KEY_FILE or $GRAPHCERT_SIGNING_KEY.")(fn)


def certificate_options(where: str, without: str) -> Callable[[Callable[..., Any]], Any]:
    """--out DIR (default reports/) and --no-certificate, for the commands that write
    certificates; `where` and `without` are their help texts."""
    def add(fn: Callable[..., Any]) -> Any:
        fn = click.option("--no-certificate", is_flag=True, help=without)(fn)
        return click.option("--out", "out_dir", type=PathParam(file_okay=False, path_type=Path),
                            default=Path("reports"), show_default=True, help=where)(fn)
    return add


def json_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print JSON to stdout instead of a table.")(fn)
