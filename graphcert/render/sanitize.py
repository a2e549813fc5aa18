"""Strip what a terminal would act on from text that came from a file: ANSI escape
sequences, C0/C1 control characters and bidirectional overrides. Pure, no rich.

Renderers of certificates and gate reports pass every string from a document through
`clean` (or a whole value through `clean_value`) so a field such as a workload name cannot
move the cursor, recolour the terminal, set its title or reorder what a reviewer reads.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Mapping
from enum import Enum
from typing import Any, TypeVar

T = TypeVar("T")

# CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \), other two-byte ESC sequences,
# and the 8-bit CSI/OSC introducers.
_ANSI = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
                   r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
                   r"|\x1b[@-Z\\-_]")
_BIDI = dict.fromkeys(map(ord, "\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                               "\u2066\u2067\u2068\u2069"))
_WHITESPACE = {"\n": " ", "\r": " ", "\t": " "}


def clean(text: str) -> str:
    """`text` without escape sequences, control characters or bidi overrides; newlines and
    tabs become spaces (a field is one line)."""
    if text.isprintable():
        return text
    text = _ANSI.sub("", text).translate(_BIDI)
    return "".join(_WHITESPACE.get(ch, "") if unicodedata.category(ch) == "Cc" else ch
                   for ch in text)


def clean_value(value: T) -> T:
    """`value` with every string inside it cleaned: dicts, lists, tuples and frozen
    dataclasses are rebuilt; enums, numbers and other values are kept as they are."""
    out: Any
    if isinstance(value, Enum) or value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        out = clean(value)
    elif isinstance(value, Mapping):
        out = {clean_value(k): clean_value(v) for k, v in value.items()}
    elif isinstance(value, list):
        out = [clean_value(v) for v in value]
    elif isinstance(value, tuple):
        out = tuple(clean_value(v) for v in value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: clean_value(getattr(value, f.name))
                   for f in dataclasses.fields(value) if f.init}
        out = dataclasses.replace(value, **changes)
    else:
        return value
    result: T = out
    return result
