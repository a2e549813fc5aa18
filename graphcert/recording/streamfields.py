"""The typed fields of one stream record (docs/record-streams.md): each read checks its type,
and a record that is JSON but not of the documented form raises Bad (the reader counts its
line as unreadable). Pure."""

from __future__ import annotations

from collections.abc import Mapping


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


__all__ = ["Bad", "int_field", "int_fields", "opt_int_field", "opt_str_field", "str_field"]
