"""What a step's padded rows hold: its pad values (one for every input, or one per input, as
serving engines pad token ids with a pad id, slot mappings with -1 and lengths with 0), and
the poison verify pads with to tell whether the real rows depend on the padding.

A fill is a number, or None: the padded rows then repeat the real ones (values the step
already takes, so an index stays in range and a slot stays one a real row writes).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from graphcert.errors import InputError
from graphcert.frameworks.adapters import native

Number = int | float
# One value for every input, one per input in input order, or some by position.
PadSpec = Number | tuple[Number, ...] | Mapping[int, Number]
Fill = Number | None  # None: the padded rows repeat the real rows

class PadValueError(InputError):
    """A step's pad_value or poison does not fit the inputs its make_inputs returns (a
    declaration error: verify stops, it is no bucket's failure)."""


_FORMS = "one number, a tuple with one per input, or a dict {position: number}"


def _number(value: object, what: str, finite: bool) -> Number:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{what} must be {_FORMS}; {value!r} is not a number")
    if finite and not math.isfinite(value):
        raise InputError(f"{what} must be finite (it is recorded in the certificate), not "
                         f"{value!r}")
    return value


def check_spec(spec: object, what: str, *, finite: bool = True) -> PadSpec:
    """A pad_value (or poison) as declared, checked: a number, a tuple (or list) of numbers,
    or a dict {input position: number}; InputError naming what is wrong."""
    if isinstance(spec, (tuple, list)):
        if not spec:
            raise InputError(f"{what} is an empty sequence", hint=f"give {_FORMS}")
        return tuple(_number(v, f"{what}[{i}]", finite) for i, v in enumerate(spec))
    if isinstance(spec, Mapping):
        out: dict[int, Number] = {}
        for key, value in spec.items():
            if isinstance(key, bool) or not isinstance(key, int) or key < 0:
                raise InputError(f"{what} has key {key!r}: a dict {what} maps input "
                                 "positions (ints >= 0) to numbers")
            out[key] = _number(value, f"{what}[{key}]", finite)
        return out
    return _number(spec, what, finite)


def resolve(spec: PadSpec | None, count: int, what: str, default: Fill) -> tuple[Fill, ...]:
    """One fill per input of a step whose make_inputs returns `count` inputs; positions a
    dict leaves out (and every position when `spec` is None) take `default`."""
    if spec is None:
        return (default,) * count
    if isinstance(spec, tuple):
        if len(spec) != count:
            raise PadValueError(f"{what} has {len(spec)} value(s) but make_inputs returns "
                             f"{count} input(s)",
                             hint=f"give one {what} per input in input order, or a dict "
                             "{position: value}")
        return spec
    if isinstance(spec, Mapping):
        beyond = sorted(k for k in spec if k >= count)
        if beyond:
            raise PadValueError(f"{what} names input {beyond[0]} but make_inputs returns "
                             f"{count} input(s) (positions 0..{count - 1})")
        return tuple(spec.get(i, default) for i in range(count))
    return (spec,) * count


def recorded(spec: PadSpec, count: int | None) -> Number | list[Number]:
    """The pad values as the certificate records them: one number where one serves every
    input, else one per input (a dict's missing positions 0.0; up to its last position
    where the inputs were never made)."""
    if not isinstance(spec, (tuple, Mapping)):
        return spec
    if count is None:
        count = len(spec) if isinstance(spec, tuple) else max(spec, default=-1) + 1
    return [v if v is not None else 0.0 for v in resolve(spec, count, "pad_value", 0.0)]


def word(fill: Fill) -> str:
    """A fill as a message shows it."""
    if fill is None:
        return "copies of the real rows"
    if isinstance(fill, float) and math.isnan(fill):
        return "NaN"
    return f"{fill:g}" if isinstance(fill, float) else str(fill)


def describe(fills: Sequence[Fill]) -> str:
    """The fills of all inputs: one word where they agree, else a list in input order."""
    if len({word(f) for f in fills}) == 1:
        return word(fills[0])
    return "[" + ", ".join(word(f) for f in fills) + "]"


def fill_rows(dst: object, n: int, fill: Fill,
              arange: Callable[[int], object] = np.arange) -> None:
    """Rows n.. of an indexable array (numpy; CuPy with its own `arange`) set to `fill`, or
    to the first n rows repeated (rows 0..n-1, 0..n-1, ...) where `fill` is None."""
    # numpy's and CuPy's indexing alike, which no Protocol here could type for both
    rows, indices = native(dst), native(arange)
    rest = rows.shape[0] - n
    if rest <= 0:
        return
    if fill is None and n > 0:
        rows[n:] = rows[indices(rest) % n]
    else:
        rows[n:] = 0 if fill is None else fill


def padded_host(shape: tuple[int, ...], dtype: npt.DTypeLike, src: object, n: int,
                fill: Fill) -> np.ndarray:
    """A host array of `shape`: `src` (n rows) first, the rest padded with `fill`."""
    out = np.empty(shape, dtype=dtype)
    out[:n] = np.asarray(src)
    fill_rows(out, n, fill)
    return out


__all__ = ["Fill", "Number", "PadSpec", "PadValueError", "check_spec", "describe",
           "fill_rows", "padded_host", "recorded", "resolve", "word"]
