"""Options shared by commands that run on a GPU, and the one rule for $GRAPHCERT_DEVICE."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from graphcert.errors import InputError

DEVICE_ENV = "GRAPHCERT_DEVICE"


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


def resolve_device(option: int | None) -> int:
    """The device index: --device when given, else $GRAPHCERT_DEVICE, else 0.

    The one rule everywhere: only a command that needs a GPU calls this, so a bad variable
    is an error naming it (exit 2) there, and is ignored by commands that need no device
    (inventory of a snapshot file, gate, show, diff)."""
    if option is not None:
        return option
    raw = os.environ.get(DEVICE_ENV, "").strip()
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


def resolve_devices(option: str | None) -> int | DeviceSet:
    """--device when given, else $GRAPHCERT_DEVICE, else 0; either may name several GPUs."""
    if option is not None:
        return parse_devices(option)
    raw = os.environ.get(DEVICE_ENV, "").strip()
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
    return resolve_devices(value)


def device_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--device for commands that always need a GPU (resolved while parsing): an index, or
    `all` / `0,2` for one worker process per GPU (see graphcert.commands._fleet)."""
    return click.option("--device", "device", default=None, metavar="N|all|N,M",
                        callback=_device_now, show_default="$GRAPHCERT_DEVICE or 0",
                        help="CUDA device index, `all`, or a list such as 0,2 (one worker "
                             "per GPU, one certificate each; see `graphcert env`).")(fn)


def lazy_device_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--device for a command that needs a GPU only sometimes: it gets None when not given
    and calls resolve_device only when it needs a device."""
    return click.option("--device", "device", type=click.IntRange(min=0), default=None,
                        show_default="$GRAPHCERT_DEVICE or 0",
                        help="CUDA device index, when a workload is captured.")(fn)


def _signing_key(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    """Check the signing key before any GPU work; a key file given here is the one the
    certificate writer uses (through $GRAPHCERT_SIGNING_KEY_FILE)."""
    from graphcert.cert.signing import KEY_FILE_ENV, load_key, shadowed_key_note

    load_key(value)
    note = shadowed_key_note(value)
    if note is not None:
        click.echo(f"graphcert: warning: {note}", err=True)
    if value is not None:
        os.environ[KEY_FILE_ENV] = str(value)


def signing_key_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--signing-key-file for commands that write certificates."""
    return click.option("--signing-key-file", type=PathParam(path_type=Path), default=None,
                        expose_value=False, callback=_signing_key,
                        help="Sign certificates with this key (HMAC-SHA256); default "
                             "$GRAPHCERT_SIGNING_KEY_FILE or $GRAPHCERT_SIGNING_KEY.")(fn)


def json_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print JSON to stdout instead of a table.")(fn)
