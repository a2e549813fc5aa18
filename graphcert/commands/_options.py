"""Options shared by commands that run on a GPU, the one number type every numeric option
uses, and `invocation()`: the one way a command gets its graphcert.invocation.Invocation (built
by graphcert.cli or graphcert.worker, carried in click's context object) to pass down."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import click

from graphcert.errors import InputError
from graphcert.invocation import (
    DeviceSet,
    Invocation,
    is_index,
    parse_devices,
    resolve_device,
    resolve_devices,
)
from graphcert.options import DEVICE_ENV

__all__ = ["DeviceSet", "parse_devices", "resolve_device", "resolve_devices"]

# A command function an option decorator adds a parameter to and gives back (click's own FC).
F = TypeVar("F", bound=Callable[..., object])


def invocation(ctx: click.Context | None = None) -> Invocation:
    """This command's invocation, as graphcert.cli (or a worker) built it and as its
    --signing-key-file completed it."""
    ctx = ctx or click.get_current_context()
    found = ctx.find_object(Invocation)
    if found is None:
        raise RuntimeError("a graphcert command runs under graphcert.cli's group, which "
                           "builds its Invocation")
    return found


class PathParam(click.Path):
    """click.Path for every path a command takes: an empty one is refused (click reads ''
    as the current folder, so `gate ''` gated it), and click's own refusals (a folder
    given where a file belongs) are one line, exit 2, like every other bad input."""

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> str | bytes | os.PathLike[str]:
        label = _label(param)
        if isinstance(value, (str, bytes)) and not value:
            raise InputError(f"{label} is an empty path", hint="give a file or folder path")
        try:
            # click hands convert whatever was given; click.Path's own checks refuse the rest
            return super().convert(cast("str | os.PathLike[str]", value), param, ctx)
        except click.BadParameter as exc:
            raise InputError(f"{label}: {' '.join(exc.message.split())}") from None


def _label(param: click.Parameter | None) -> str:
    """How a message names a parameter: `--junit`, or `PATHS` for an argument."""
    if isinstance(param, click.Option):
        return param.opts[0]
    return param.human_readable_name if param is not None else "a path"


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

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> int | float:
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


def _device_now(ctx: click.Context, param: click.Parameter, value: str | None
                ) -> int | DeviceSet:
    return invocation(ctx).devices(value)


def _one_device(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    """--device N as given (None when not): one GPU. $GRAPHCERT_DEVICE is read later, by
    resolve_device, and only where a GPU is needed."""
    if value is None:
        return None
    text = value.strip()
    if is_index(text):
        return int(text)
    if text.lower() == "all" or "," in text:
        raise InputError(f"--device={value[:40]!r} names several GPUs; "
                         f"{ctx.info_name or 'this command'} runs on one",
                         hint="give one index such as --device 0 (see `graphcert env`)")
    raise InputError(f"--device={value[:40]!r} is not a device index",
                     hint="give a number such as 0 (see `graphcert env`)")


_DEVICE_HELP = "CUDA device index (see `graphcert env`)"


def _device(fn: F, metavar: str, callback: Callable[..., Any], help_text: str) -> F:
    """The one --device option: one name, one parser (parse_devices), one default shown."""
    return click.option("--device", "device", default=None, metavar=metavar,
                        callback=callback, show_default=f"${DEVICE_ENV} or 0",
                        help=help_text)(fn)


def device_option(fn: F) -> F:
    """--device for commands that always need a GPU (resolved while parsing): an index, or
    `all` / `0,2` for one worker process per GPU (see graphcert.commands._fleet)."""
    return _device(fn, "N|all|N,M", _device_now,
                   f"{_DEVICE_HELP}, `all`, or a list such as 0,2 (one worker process per "
                   "GPU).")


def single_device_option(fn: F) -> F:
    """The same --device for a command that runs on one GPU, and only sometimes (inventory
    of a workload, not of a file): it gets None when not given, and calls resolve_device
    only when it needs a device, so a bad $GRAPHCERT_DEVICE never fails `inventory FILE`."""
    return _device(fn, "N", _one_device,
                   f"{_DEVICE_HELP}; used only when a workload is captured.")


def _signing_key(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    """Load the signing key before any GPU work (a bad one is exit 2 here) into the
    invocation's Options, which carry it to the certificate writer."""
    signed = invocation(ctx).signed(value)
    for line in signed.options.warnings:
        click.echo(f"graphcert: warning: {line}", err=True)
    ctx.obj = signed


def signing_key_option(fn: F) -> F:
    """--signing-key-file for commands that write certificates."""
    return click.option("--signing-key-file", type=PathParam(path_type=Path), default=None,
                        expose_value=False, callback=_signing_key,
                        help="Sign certificates with this key (HMAC-SHA256); default "
                             "$GRAPHCERT_SIGNING_KEY_FILE or $GRAPHCERT_SIGNING_KEY.")(fn)


def certificate_options(where: str, without: str) -> Callable[[F], F]:
    """--out DIR (default reports/) and --no-certificate, for the commands that write
    certificates; `where` and `without` are their help texts."""
    def add(fn: F) -> F:
        fn = click.option("--no-certificate", is_flag=True, help=without)(fn)
        return click.option("--out", "out_dir", type=PathParam(file_okay=False, path_type=Path),
                            default=Path("reports"), show_default=True, help=where)(fn)
    return add


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print JSON to stdout instead of a table.")(fn)
