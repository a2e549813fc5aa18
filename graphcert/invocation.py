"""One invocation of graphcert, typed and frozen: what the environment says (Options), the
consoles output goes to, the worker hooks when a worker runs the command, and the rule that
selects devices. It is built once where a run starts (graphcert.cli for the command line,
graphcert.worker for a worker) and passed down, as hatch's `Application` and httpie's
`Environment` are; nothing below reads the process environment for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from rich.console import Console

from graphcert.errors import GraphcertError, InputError
from graphcert.options import DEVICE_ENV, Options
from graphcert.render.console import data_console

if TYPE_CHECKING:
    from graphcert.cert.results.fleet import EventSink


@dataclass(frozen=True)
class WorkerHooks:
    """What a worker (graphcert.worker) tells the command it runs, from its job: who takes
    the command's error (the worker replies with it, typed, instead of a printed line), where
    progress goes (None: nowhere), how certificates are named (None: as Options say)."""

    on_error: Callable[[GraphcertError], None]
    events: EventSink | None = None
    uuid_names: bool | None = None


@dataclass(frozen=True)
class Invocation:
    """One run of graphcert: its settings (`options`, what run/ is given), the process
    environment as it was read (`environ`: a worker's own environment is made from it), the
    stdout and stderr consoles, the worker hooks (None on the command line) and the key
    file given with --signing-key-file (a worker loads the same key)."""

    options: Options
    environ: Mapping[str, str]
    out: Console
    err: Console
    hooks: WorkerHooks | None = None
    key_file: Path | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str], *,
                     hooks: WorkerHooks | None = None) -> Invocation:
        """The invocation `environ` gives, without a signing key (commands that write
        certificates load it: `signed`); a worker's hooks decide certificate names."""
        options = Options.from_environ(environ, signing=False)
        if hooks is not None and hooks.uuid_names is not None:
            options = dataclasses.replace(options, uuid_names=hooks.uuid_names)
        frozen = MappingProxyType(dict(environ))
        return cls(options, frozen, data_console(environ=frozen),
                   data_console(stderr=True, environ=frozen), hooks)

    def signed(self, key_file: Path | None) -> Invocation:
        """This invocation with its signing key loaded (InputError for a bad one): `key_file`,
        else $GRAPHCERT_SIGNING_KEY_FILE, else $GRAPHCERT_SIGNING_KEY."""
        read = Options.from_environ(self.environ, key_file=key_file)
        options = dataclasses.replace(self.options, signing_key=read.signing_key,
                                      warnings=read.warnings)
        return dataclasses.replace(self, options=options, key_file=key_file)

    @property
    def events(self) -> EventSink | None:
        """Where progress events go: the worker's parent, when it draws the bars."""
        return self.hooks.events if self.hooks is not None else None

    def device(self, option: int | None) -> int:
        """One device: `option` (--device) when given, else $GRAPHCERT_DEVICE, else 0."""
        return resolve_device(option, self.options)

    def devices(self, option: str | None) -> int | DeviceSet:
        """One device or several: --device when given, else $GRAPHCERT_DEVICE, else 0."""
        return resolve_devices(option, self.options)


_MAX_DEVICE_DIGITS = 6


@dataclass(frozen=True)
class DeviceSet:
    """Several GPUs asked for (`--device all` or `--device 0,2`): one worker per GPU.
    `indices` None means every GPU; the list is checked against the machine before work."""

    indices: tuple[int, ...] | None
    text: str

    def __str__(self) -> str:
        return self.text


def is_index(text: str) -> bool:
    """Whether `text` is one device index as typed (digits, not too many)."""
    return text.isascii() and text.isdigit() and len(text) <= _MAX_DEVICE_DIGITS


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
    if not is_index(raw):
        raise InputError(f"${DEVICE_ENV}={raw[:40]!r} is not a device index",
                         hint=f"set {DEVICE_ENV} to a number such as 0 (see `graphcert env`), "
                              f"or unset it")
    return int(raw)


def parse_devices(raw: str, source: str = "--device") -> int | DeviceSet:
    """`N` (one GPU, as today), `all`, or a comma list `0,2` (each index once)."""
    text = raw.strip()
    if text.lower() == "all":
        return DeviceSet(None, "all")
    parts = [p.strip() for p in text.split(",")]
    if not text or not all(is_index(p) for p in parts):
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
