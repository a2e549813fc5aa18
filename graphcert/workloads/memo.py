"""An in-process cache of host-side inputs and references, keyed by (what, seed, options).

verify builds numpy references for every sample size of every class; the expensive parts
(decode's pool of rows through the layer stack, label propagation) depend on the seed and
the options, not on the GPU, so they are computed once per process and shared: between the
sizes of a class, between classes, and between workloads that derive from the same inputs
(fixpoint and converge propagate over the same generated graph). Pure: no CUDA.

Cached arrays are made read-only, so a caller that writes into one fails loudly instead of
corrupting every later reference. The cache holds at most `BUDGET_BYTES`; the least recently
used entries go first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

BUDGET_BYTES = 1 << 30  # a verify of 2^0..2^20 keeps well under 100 MB here
T = TypeVar("T")

_entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
_held = 0


def frozen(value: T) -> T:
    """Mark every ndarray in `value` (an array, or a tuple/list/dict of them) read-only."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, tuple | list):
        for item in value:
            frozen(item)
    elif isinstance(value, dict):
        for item in value.values():
            frozen(item)
    return value


def _nbytes(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, tuple | list):
        return sum(_nbytes(v) for v in value)
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values())
    return 64


def cached(key: Hashable, build: Callable[[], T]) -> T:
    """The value stored under `key`, built (and frozen) on first use."""
    global _held
    if key in _entries:
        _entries.move_to_end(key)
        return _entries[key][0]
    value = frozen(build())
    size = _nbytes(value)
    _entries[key] = (value, size)
    _held += size
    while _held > BUDGET_BYTES and len(_entries) > 1:
        _, (_, dropped) = _entries.popitem(last=False)
        _held -= dropped
    return value


def clear() -> None:
    """Forget everything (tests and benchmarks measure cold builds with it)."""
    global _held
    _entries.clear()
    _held = 0


def held_bytes() -> int:
    return _held


def lookup(key: Hashable) -> object | None:
    """The value under `key`, or None (no build). The cache holds values of any type; the
    caller that owns `key` knows which and says so (a cast)."""
    if key not in _entries:
        return None
    _entries.move_to_end(key)
    return _entries[key][0]


def store(key: Hashable, value: T) -> T:
    """Replace the value under `key` (frozen), e.g. a computation carried further."""
    global _held
    if key in _entries:
        _held -= _entries.pop(key)[1]
    return cached(key, lambda: value)
