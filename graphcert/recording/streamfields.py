"""The typed fields of one stream record (docs/record-streams.md): each read checks its type,
and a record that is JSON but not of the documented form raises Bad (the reader counts its
line as unreadable); and what a stream's file name says. Pure."""

from __future__ import annotations

import re
from collections.abc import Mapping

# proc-<pid>-<start ticks>.jsonl, then -e1, -e2, ... for each program the process exec'd
# that initialised CUDA again (the pid and start ticks stay the same across exec)
STREAM_NAME = re.compile(r"proc-(\d+)-(\d+)(?:-e(\d+))?\.jsonl")


def stream_name_key(name: str) -> tuple[int, int, int]:
    """(pid, start ticks, exec number) from proc-<pid>-<start>[-e<n>].jsonl; zeros for a
    name of another form."""
    found = STREAM_NAME.fullmatch(name)
    if found is None:
        return 0, 0, 0
    pid, start, execs = found.groups()
    return int(pid), int(start), int(execs or 0)


class Bad(ValueError):
    """A line that is JSON but not a record of the documented form."""


def int_field(rec: Mapping[str, object], key: str) -> int:
    """The integer field `key` (a bool is not one)."""
    value = rec.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise Bad(key)
    return value


def int_fields(rec: Mapping[str, object], keys: tuple[str, ...]) -> tuple[int, ...]:
    """The integer fields `keys` of a record (the hot records': one pass for all)."""
    values: list[int] = []
    for key in keys:
        value = rec.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise Bad(key)
        values.append(value)
    return tuple(values)


def opt_int_field(rec: Mapping[str, object], key: str) -> int | None:
    """The integer field `key`, or None where it is null or absent."""
    return None if rec.get(key) is None else int_field(rec, key)


def str_field(rec: Mapping[str, object], key: str) -> str:
    """The string field `key`."""
    value = rec.get(key)
    if not isinstance(value, str):
        raise Bad(key)
    return value


def opt_str_field(rec: Mapping[str, object], key: str) -> str | None:
    """The string field `key`, or None where it is null or absent."""
    return None if rec.get(key) is None else str_field(rec, key)


__all__ = ["STREAM_NAME", "Bad", "int_field", "int_fields", "opt_int_field", "opt_str_field",
           "str_field", "stream_name_key"]
