"""The types of JSON documents as graphcert writes and reads them, and the narrowing a
reader does on a value it takes from one. Pure; the base layer.

A document written (`to_json`) is a `JSONObject`. A document read is a `Doc`: its values are
whatever the JSON held, and a reader narrows each one it uses with the helpers below. They
raise TypeError on a value of another type; the JSON Schemas checked before any typed reader
runs (graphcert.cert.schemas) make that a bug, never bad input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeAlias

JSONScalar: TypeAlias = "str | int | float | bool | None"
JSONValue: TypeAlias = "JSONScalar | list[JSONValue] | dict[str, JSONValue]"
JSONObject: TypeAlias = "dict[str, JSONValue]"
Doc: TypeAlias = "Mapping[str, object]"


def _wrong(key: str, value: object, want: str) -> TypeError:
    return TypeError(f"{key!r}: expected {want}, got {type(value).__name__}")


def as_object(value: object, what: str = "document") -> Doc:
    """`value` (a whole parsed document) as a JSON object."""
    if not isinstance(value, Mapping):
        raise _wrong(what, value, "an object")
    return value


def as_int(doc: Doc, key: str) -> int:
    """doc[key] as an int (a bool is not one)."""
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong(key, value, "an integer")
    return value


def as_int_or(doc: Doc, key: str, default: int) -> int:
    """doc[key] as an int, `default` where the key is absent (a field added later)."""
    return as_int(doc, key) if key in doc else default


def as_opt_int(doc: Doc, key: str) -> int | None:
    """doc[key] as an int, None where it is null or absent."""
    return None if doc.get(key) is None else as_int(doc, key)


def as_float(doc: Doc, key: str) -> float:
    """doc[key] as a float (an integer reads as one; a bool does not)."""
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _wrong(key, value, "a number")
    return float(value)


def as_opt_float(doc: Doc, key: str) -> float | None:
    """doc[key] as a float, None where it is null or absent."""
    return None if doc.get(key) is None else as_float(doc, key)


def as_opt_number(doc: Doc, key: str) -> float | None:
    """doc[key] as the number it is (an integer stays one, so it is written back as it was
    read), None where it is null or absent."""
    if doc.get(key) is None:
        return None
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _wrong(key, value, "a number")
    return value


def as_str(doc: Doc, key: str) -> str:
    """doc[key] as a str."""
    value = doc[key]
    if not isinstance(value, str):
        raise _wrong(key, value, "a string")
    return value


def as_opt_str(doc: Doc, key: str) -> str | None:
    """doc[key] as a str, None where it is null or absent."""
    return None if doc.get(key) is None else as_str(doc, key)


def as_bool(doc: Doc, key: str) -> bool:
    """doc[key] as a bool."""
    value = doc[key]
    if not isinstance(value, bool):
        raise _wrong(key, value, "true or false")
    return value


def as_opt_bool(doc: Doc, key: str) -> bool | None:
    """doc[key] as a bool, None where it is null or absent."""
    return None if doc.get(key) is None else as_bool(doc, key)


def as_doc(doc: Doc, key: str) -> Doc:
    """doc[key] as a JSON object."""
    value = doc[key]
    if not isinstance(value, Mapping):
        raise _wrong(key, value, "an object")
    return value


def as_opt_doc(doc: Doc, key: str) -> Doc | None:
    """doc[key] as a JSON object, None where it is null or absent."""
    return None if doc.get(key) is None else as_doc(doc, key)


def as_list(doc: Doc, key: str) -> Sequence[object]:
    """doc[key] as a JSON array."""
    value = doc[key]
    if not isinstance(value, list):
        raise _wrong(key, value, "an array")
    return value


def as_docs(doc: Doc, key: str) -> list[Doc]:
    """doc[key] as a JSON array of objects."""
    items = as_list(doc, key)
    out: list[Doc] = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise _wrong(f"{key}[{i}]", item, "an object")
        out.append(item)
    return out


def as_floats(doc: Doc, key: str) -> list[float]:
    """doc[key] as a JSON array of numbers, each a float (an integer reads as one)."""
    out: list[float] = []
    for i, item in enumerate(as_list(doc, key)):
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise _wrong(f"{key}[{i}]", item, "a number")
        out.append(float(item))
    return out


def as_strs(doc: Doc, key: str) -> list[str]:
    """doc[key] as a JSON array of strings."""
    out: list[str] = []
    for i, item in enumerate(as_list(doc, key)):
        if not isinstance(item, str):
            raise _wrong(f"{key}[{i}]", item, "a string")
        out.append(item)
    return out


def to_int(doc: Doc, key: str) -> int:
    """int(doc[key]), for a reader that has always converted rather than narrowed (the
    worker protocol): a number (truncated, as int() does), a bool or numeric text; any
    other value raises TypeError as int() itself would."""
    value = doc[key]
    if not isinstance(value, (int, float, str)):
        raise _wrong(key, value, "a number or numeric text")
    return int(value)


def to_float(doc: Doc, key: str) -> float:
    """float(doc[key]), with to_int's tolerance: a number, a bool or numeric text."""
    value = doc[key]
    if not isinstance(value, (int, float, str)):
        raise _wrong(key, value, "a number or numeric text")
    return float(value)


def to_ints(doc: Doc, key: str) -> tuple[int, ...]:
    """doc[key]'s items each converted as to_int does (any iterable, as a loop over it
    took one)."""
    value = doc[key]
    if not isinstance(value, Iterable):
        raise _wrong(key, value, "an array")
    return tuple(to_int({f"{key}[{i}]": item}, f"{key}[{i}]") for i, item in enumerate(value))


def as_json(value: object, what: str = "value") -> JSONValue:
    """`value` (a part of a parsed document a reader keeps whole, such as an embedded
    snapshot or a cache key) as the JSON it is, checked all the way down so it can be written
    back; objects and arrays are copied."""
    if value is None or isinstance(value, (str, int, float)):  # bool is an int
        return value
    if isinstance(value, list):
        return [as_json(item, f"{what}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, Mapping):
        out: JSONObject = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _wrong(what, key, "an object with string keys")
            out[key] = as_json(item, f"{what}.{key}")
        return out
    raise _wrong(what, value, "a JSON value")


def as_scalar(value: object, what: str = "value") -> JSONScalar:
    """`value` (a field a schema admits any scalar in, such as a producer's addition) as the
    scalar it is, unconverted."""
    if value is None or isinstance(value, (str, int, float)):  # bool is an int
        return value
    raise _wrong(what, value, "a scalar")


def as_json_object(value: Doc, what: str = "document") -> JSONObject:
    """A read document as a JSONObject, checked all the way down (as_json)."""
    checked = as_json(value, what)
    assert isinstance(checked, dict)  # value is a Mapping: as_json gave an object
    return checked


def as_number(doc: Doc, key: str) -> float:
    """doc[key] as the number it is (an integer stays one, so it is written back as it was
    read)."""
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _wrong(key, value, "a number")
    return value


def as_json_doc(doc: Doc, key: str) -> JSONObject:
    """doc[key] (an object a reader keeps whole) as the JSON object it is (`as_json`)."""
    value = as_json(as_doc(doc, key), key)
    assert isinstance(value, dict)  # as_doc made sure it is an object
    return value


def as_opt_strs(doc: Doc, key: str) -> list[str | None]:
    """doc[key] as a JSON array of strings and nulls."""
    out: list[str | None] = []
    for i, item in enumerate(as_list(doc, key)):
        if item is not None and not isinstance(item, str):
            raise _wrong(f"{key}[{i}]", item, "a string or null")
        out.append(item)
    return out


def as_numbers(doc: Doc, key: str) -> list[float]:
    """doc[key] as a JSON array of numbers, each as the number it is (an integer stays one,
    so it prints and is written back as it was read)."""
    out: list[float] = []
    for i, item in enumerate(as_list(doc, key)):
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise _wrong(f"{key}[{i}]", item, "a number")
        out.append(item)
    return out


def as_ints(doc: Doc, key: str) -> list[int]:
    """doc[key] as a JSON array of integers (a bool is not one)."""
    out: list[int] = []
    for i, item in enumerate(as_list(doc, key)):
        if isinstance(item, bool) or not isinstance(item, int):
            raise _wrong(f"{key}[{i}]", item, "an integer")
        out.append(item)
    return out
