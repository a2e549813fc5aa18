"""Argument checks at the edge of the public API (graphcert/__init__.py): every bad argument
is a graphcert.errors.InputError with one line naming the argument, what it got and what it
takes, never an AttributeError or TypeError from deep inside. Pure and import-light."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from graphcert.errors import InputError

if TYPE_CHECKING:
    from graphcert.model import GraphSnapshot


def as_tuple(value: object) -> tuple[object, ...]:
    """What a user's callable returned (a step's inputs or outputs) as a tuple: a tuple as it
    is, a list as a tuple, anything else (one array) as a 1-tuple."""
    if isinstance(value, tuple):
        return value
    if isinstance(value, list):
        return tuple(value)
    return (value,)


def type_name(value: object) -> str:
    """`int`, `NoneType`, or `module.Class` for anything not built in."""
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


def path_arg(value: object, what: str) -> Path:
    """A path argument: a str or os.PathLike of text, not empty, without NUL."""
    try:  # a user's __fspath__ runs here: whatever it raises or returns is an InputError
        text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    except Exception as exc:
        raise InputError(f"{what}: the path object's __fspath__ failed ({type(exc).__name__}: "
                         f"{str(exc)[:80]})", hint="pass a str or a pathlib.Path") from None
    if not isinstance(text, str):
        got = f"a {type_name(value)}" if not isinstance(value, os.PathLike) else \
            f"a {type_name(value)} whose __fspath__ gives a {type_name(text)}"
        raise InputError(f"{what} must be a path (str or os.PathLike), not {got}")
    if not text:
        raise InputError(f"{what} is an empty path", hint="give a file path")
    if "\0" in text:
        raise InputError(f"{what} {text[:60]!r} holds a NUL character, which no path can")
    return Path(text)


def snapshot_arg(value: object, what: str) -> GraphSnapshot:
    """A GraphSnapshot argument."""
    from graphcert.model import GraphSnapshot

    if not isinstance(value, GraphSnapshot):
        raise InputError(f"{what} must be a GraphSnapshot (from graphcert.snapshot or "
                         f"graphcert.load), not a {type_name(value)}")
    return value


def snapshot_or_path(value: object, what: str) -> GraphSnapshot | Path:
    """A GraphSnapshot, or the path of a snapshot file (checked like path_arg)."""
    from graphcert.model import GraphSnapshot

    if isinstance(value, GraphSnapshot):
        return value
    if not isinstance(value, (str, os.PathLike)):
        raise InputError(f"{what} must be a GraphSnapshot or a snapshot file's path, not a "
                         f"{type_name(value)}")
    return path_arg(value, what)


def optional_text(value: object, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InputError(f"{what} must be a str or None, not a {type_name(value)}")
    return value


def text_arg(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        shown = repr(value)[:40] if isinstance(value, str) else f"a {type_name(value)}"
        raise InputError(f"{what} must be a non-empty str, not {shown}")
    return value


def number_arg(value: object, what: str) -> float:
    """A real number (an int or float, not a bool); its range is the callee's to check."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{what} must be a number, not a {type_name(value)}")
    return float(value)


def int_arg(value: object, what: str, minimum: int) -> int:
    """An int (not a bool) of at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        shown = repr(value)[:40] if isinstance(value, int) else f"a {type_name(value)}"
        raise InputError(f"{what} must be an int >= {minimum}, not {shown}")
    return value


def callable_arg(value: object, what: str, *, optional: bool = False) -> None:
    if (value is None and optional) or callable(value):
        return
    raise InputError(f"{what} must be callable{' or None' if optional else ''}, not a "
                     f"{type_name(value)}")
