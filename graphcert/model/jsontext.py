"""The text fingerprints and digests are taken over: canonical JSON (sorted keys, no
whitespace, no NaN), its sha256, a hash's short form for people, and the JSON-able copy of a
reader's attribute values. Pure: no CUDA import."""

from __future__ import annotations

import hashlib
import json
import numbers
from collections.abc import Callable, Mapping
from typing import Any, cast

from graphcert.errors import GraphcertError
from graphcert.jsontypes import JSONScalar, JSONValue

# json.dumps with these options builds a new encoder on every call (a third of the cost for
# the small dicts a node's signature is made of); one encoder gives the same text.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                              allow_nan=False)


def _direct_encoder() -> Callable[[Any], str]:
    """json's C encoder called as JSONEncoder.encode calls it, without the set-up encode()
    repeats per call (~2 of ~6 µs for a node's signature on this repository's CPU). It skips
    the circular-reference check, which normalised attributes never need. _CANONICAL.encode
    where this Python has no C encoder or its text differs on a probe."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _CANONICAL.encode
    try:
        chunks = make(None, _CANONICAL.default, json.encoder.encode_basestring, None, ":", ",",
                      True, False, False)

        def encode(value: Any) -> str:
            return "".join(chunks(value, 0))

        probe = {"b": [1, True, None, "é\n\"", 2.5, -0.0], "a": {"y": 2, "x": [], "": {}}}
        if encode(probe) == _CANONICAL.encode(probe):
            return encode
    except Exception:  # noqa: BLE001 - another Python's encoder: the documented path
        pass
    return _CANONICAL.encode


_encode = _direct_encoder()


def canonical_json(value: object) -> str:
    """Sorted keys, no whitespace, no NaN: the text fingerprints are taken over."""
    return _encode(value)


def sha256_text(text: str) -> str:
    """sha256 hex of UTF-8 text (never Python's hash(): it differs per process)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


SHORT_HASH = 12  # hex digits of a hash shown in tables and names (documents keep all of it)


def short_hash(value: str | None, length: int = SHORT_HASH) -> str:
    """The first `length` characters of a hash (without any `sha256:`), or 'none'."""
    return "none" if value is None else value.removeprefix("sha256:")[:length]


PLAIN_TYPES = (int, str, bool, type(None))
"""Attribute value types kept as they are (checked by exact type)."""


def normalize_attr(value: object, where: str) -> JSONValue:
    """A JSON-able copy of an attribute value: tuples become lists, numpy scalars Python ones."""
    kind = type(value)
    if kind in PLAIN_TYPES:  # the common case, checked by exact type: snapshots can be 10^5 nodes
        return cast(JSONScalar, value)  # an int, str, bool or None: checked just above
    if kind is list and all(type(v) is int for v in cast("list[JSONValue]", value)):
        return list(cast("list[JSONValue]", value))  # a list of ints: checked just above
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        if f != f or f in (float("inf"), float("-inf")):
            raise GraphcertError(f"{where} is {f}, which JSON cannot hold")
        return f
    if isinstance(value, (list, tuple)):
        return [normalize_attr(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        return {str(k): normalize_attr(v, f"{where}.{k}") for k, v in value.items()}
    raise GraphcertError(
        f"{where} is a {type(value).__name__}, not a JSON value",
        hint="a snapshot reader must record plain numbers, strings and lists, never handles",
    )
