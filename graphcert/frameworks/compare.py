"""Comparing a step's replayed rows with its eager rows: on the device where the adapter can
(one host read per sample, nothing copied when they match), otherwise, and always to say
what differs, on the host with numpy (first_mismatch is authoritative)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphcert.frameworks.adapters import Adapter, device_compare
from graphcert.frameworks.step import Step, first_rows


def _num(value: Any) -> str:
    try:
        return f"{float(value):.6g}"
    except (TypeError, ValueError):
        return repr(value)


def first_mismatch(got: Sequence[np.ndarray], want: Sequence[np.ndarray], rtol: float,
                   atol: float) -> str | None:
    """The first output and row where the graph's rows differ from the eager ones, or None.

    Only the elements whose bits differ are compared by value: equal bits are close under
    np.isclose(equal_nan=True) whatever they hold (NaN, infinities), and a replay usually
    repeats the eager result bit for bit, so a matching sample costs one pass over bytes
    instead of upcasting every element (float16 rows of 136 x 256: ~10 against ~170 µs on
    this repository's CPU)."""
    if len(got) != len(want):
        return f"the graph gave {len(got)} outputs, the eager call {len(want)}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g.shape != w.shape:
            return f"output {i} has shape {g.shape} from the graph but {w.shape} eagerly"
        if g.size == 0:
            continue
        flat_g, flat_w, where = _differing(g, w)
        if where is not None and where.size == 0:
            continue  # bit for bit the same
        if g.dtype.kind in "fc" or w.dtype.kind in "fc":
            if _all_close_finite(flat_g, flat_w, rtol, atol):
                continue
            bad = ~np.isclose(flat_g.astype(np.float64), flat_w.astype(np.float64), rtol=rtol,
                              atol=atol, equal_nan=True)
        else:
            bad = flat_g != flat_w
        if bad.any():
            first = int(np.argmax(bad))
            flat = int(where[first]) if where is not None else first
            row = flat // max(g.size // g.shape[0], 1) if g.ndim else 0
            with np.errstate(invalid="ignore", over="ignore"):
                worst = float(np.max(np.abs(flat_g.astype(np.float64)
                                            - flat_w.astype(np.float64))))
            return (f"output {i} row {row} differs from the eager result (graph "
                    f"{_num(flat_g[first])}, eager {_num(flat_w[first])}; max abs difference "
                    f"{worst:.3g}, rtol {rtol:g}, atol {atol:g})")
    return None


_NONE = np.empty(0, dtype=np.intp)
_NONE.flags.writeable = False


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two contiguous 1-d arrays of one dtype hold the same bytes, compared eight
    at a time where the size allows: the usual sample's whole test (float16 rows of
    136 x 256: ~7 against ~14 µs element by element on this repository's CPU)."""
    x, y = a.view(np.uint8), b.view(np.uint8)
    if x.size % 8 == 0:
        x, y = x.view(np.uint64), y.view(np.uint64)
    return bool((x == y).all())


def _differing(g: np.ndarray, w: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(g's elements, w's elements, their flat indices) where the two differ bit for bit
    (no index: none differ). Every element of both, flattened, and None for the indices
    where the dtypes differ (no bitwise test) or most elements differ (then picking them
    out costs more than comparing all)."""
    if g.dtype != w.dtype:
        return g.reshape(-1), w.reshape(-1), None
    flat_g, flat_w = np.ascontiguousarray(g).reshape(-1), np.ascontiguousarray(w).reshape(-1)
    if _same_bits(flat_g, flat_w):
        return flat_g[:0], flat_w[:0], _NONE
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}.get(g.dtype.itemsize)
    if unsigned is not None:
        neq = flat_g.view(unsigned) != flat_w.view(unsigned)
    else:  # complex128, longdouble: compare their bytes row by row
        width = g.dtype.itemsize
        neq = (flat_g.view(np.uint8).reshape(-1, width)
               != flat_w.view(np.uint8).reshape(-1, width)).any(axis=1)
    if 4 * np.count_nonzero(neq) > neq.size:  # counted first: listing them costs 10x more
        return flat_g, flat_w, None
    where = np.flatnonzero(neq)
    return flat_g[where], flat_w[where], where


# Rows smaller than this (both sides together) are compared on the host even where the
# adapter can compare on the device. Measured on an H100 (PyTorch MLP, rows of 1-136 x 512
# fp16): the device comparison's dozen small kernels and one host read cost ~0.7 ms a
# sample, copying the rows and numpy's isclose ~0.1 ms; copying only wins for large rows.
DEVICE_COMPARE_MIN_BYTES = 8 << 20


# Tolerances the float16 rows' float32 test takes: finite (a NaN fails the comparison), and
# small enough that rtol x 65504 (float16's largest) stays finite in float32. Others go to
# the float64 test, which is numpy's formula.
_FLOAT32_SAFE = 1e30


@functools.cache
def _float16_table() -> np.ndarray:
    """Every float16 bit pattern's float32 value (256 KiB, made once, read-only)."""
    table = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
    table.flags.writeable = False
    return table


def _float32_of(a: np.ndarray) -> np.ndarray:
    """float16 as float32 through a table: the same bits as a.astype(np.float32) (checked
    over all 65,536 patterns in the tests) at half its cost, which numpy does not vectorise
    (rows of 136 x 256: ~33 against ~66 µs on this repository's CPU)."""
    return _float16_table().take(np.ascontiguousarray(a).view(np.uint16))


def _all_close_finite(g: np.ndarray, w: np.ndarray, rtol: float, atol: float) -> bool:
    """The first term of numpy's isclose, |g - w| <= atol + rtol * |w| with w finite, in
    float64, holding everywhere: then isclose is all true too (an inf or NaN fails it and
    takes np.isclose's slower path, which handles them). Several times cheaper on small
    rows than np.isclose."""
    if g.dtype.kind == "c" or w.dtype.kind == "c":
        return False
    if g.dtype == w.dtype == np.float16 and rtol <= _FLOAT32_SAFE and atol <= _FLOAT32_SAFE:
        # float32 holds float16 values exactly and rounds |x - y| and the tolerance by a few
        # parts in 2^24; shrinking the tolerance by 2^-19 keeps every pass a float64 pass.
        shrink = 1 - 2.0 ** -19
        x, y = _float32_of(g), _float32_of(w)
        with np.errstate(invalid="ignore"):  # inf - inf: NaN, caught below
            np.subtract(x, y, out=x)
        np.abs(x, out=x)
        # Every |x - y| within atol is within atol + rtol |y|: one max decides the usual
        # sample (a NaN or infinity makes it NaN or inf, and the full test below decides).
        if x.max() <= np.float32(atol * shrink):
            return True
        np.abs(y, out=y)
        if not np.isfinite(y.max()):
            return False  # an infinity or NaN in w: np.isclose handles those
        y *= np.float32(rtol * shrink)
        y += np.float32(atol * shrink)
        return bool((x <= y).all())
    x, y = g.astype(np.float64, copy=False), w.astype(np.float64, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        return bool(np.all((np.abs(x - y) <= atol + rtol * np.abs(y)) & np.isfinite(y)))


@dataclass(frozen=True)
class Kept:
    """The eager rows of n, kept before the replay: device copies or host arrays."""

    rows: list[Any]
    on_device: bool


class RowCompare:
    """The rows of n of a step's outputs, kept and compared. With the default `rows`, an
    adapter that compares on the device and rows of DEVICE_COMPARE_MIN_BYTES or more, the
    eager rows are device copies and a matching sample copies nothing to the host;
    otherwise the rows are copied to the host."""

    def __init__(self, step: Step, adapter: Adapter):
        self.step = step
        self.adapter = adapter
        self.device = device_compare(adapter) if step.rows is first_rows else None

    def _heads(self, outputs: Sequence[Any], n: int) -> list[Any]:
        return [self.adapter.head(o, n) for o in outputs]

    def _on_host(self, arrays: Sequence[Any], n: int) -> list[np.ndarray]:
        a = self.adapter
        return [first_rows(a.to_numpy(x), n) for x in arrays]

    def host_rows(self, outputs: Sequence[object], n: int) -> list[np.ndarray]:
        """The part of each output that belongs to n, on the host. With the default `rows`
        only the first n rows are copied back, not the whole padded output."""
        if self.step.rows is first_rows:
            return self._on_host(self._heads(outputs, n), n)
        return [self.step.rows(self.adapter.to_numpy(o), n) for o in outputs]

    def keep(self, outputs: Sequence[object], n: int) -> Kept:
        """The eager rows of n, copied right after the eager run and before any replay (a
        step may write into a buffer of its closure that the graph writes too): on the
        device where it compares there and the rows are large, else on the host."""
        if self.step.rows is not first_rows:
            return Kept(self.host_rows(outputs, n), False)
        heads = self._heads(outputs, n)
        if self.device is not None and \
                2 * sum(self.device.nbytes(h) for h in heads) >= DEVICE_COMPARE_MIN_BYTES:
            return Kept([self.device.clone(h) for h in heads], True)
        return Kept(self._on_host(heads, n), False)

    def mismatch(self, outputs: Sequence[object], kept: Kept, n: int) -> str | None:
        """What differs between the graph's outputs and the kept eager rows, or None."""
        rtol, atol = self.step.rtol, self.step.atol
        if not kept.on_device or self.device is None:
            return first_mismatch(self.host_rows(outputs, n), kept.rows, rtol, atol)
        got = self._heads(outputs, n)
        try:
            verdict = self.device.all_close(got, kept.rows, rtol, atol)
        except Exception:  # noqa: BLE001 - e.g. a dtype the device cannot upcast
            verdict = None  # not the step's failure: the host path decides
        if verdict is True:
            return None
        # the device says "differs" or cannot say: the host path decides and words it
        return first_mismatch(self._on_host(got, n), self._on_host(kept.rows, n), rtol, atol)
