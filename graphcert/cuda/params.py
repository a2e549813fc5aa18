"""Kernel parameter values read from a kernel node, and the check that the pointers among
them still point into the allocations they pointed into (graphcert.model.params says what
is stored).

A kernel node's parameters are read from the buffer the driver keeps for the node
(`kernelParams`: one pointer per parameter; or the `extra` launch buffer), laid out by
`cuFuncGetParamInfo` (`cuKernelGetParamInfo` for a library kernel). Where the layout or the
buffer is not to be had, the values are left unread with the reason.
"""

from __future__ import annotations

import ctypes

from cuda.bindings import driver

from graphcert.cuda.check import check
from graphcert.cuda.module import param_layout
from graphcert.cuda.types import CUfunction, CUkernel, KernelNodeParams
from graphcert.jsontypes import JSONObject, JSONValue
from graphcert.model import GraphSnapshot
from graphcert.model.kinds import UNREAD_ATTR
from graphcert.model.params import (
    PARAM_POINTERS,
    PARAM_VALUES,
    DanglingPointer,
    encode_param,
    recorded_pointers,
    unrecorded_in_span,
)

# cuLaunchKernel's `extra` keys ((void*)0x00, 0x01, 0x02 in cuda.h).
_END, _BUFFER_POINTER, _BUFFER_SIZE = 0, 1, 2
_MAX_EXTRA = 64  # pairs read from an `extra` array before giving up on its end marker

Allocation = tuple[int, int]  # (base, size)
# A word of a struct parameter below this is not looked up as an address: sizes, strides and
# flags fill structs, and device allocations lie above 4 GiB in the 64-bit address space
# (a 1,720-byte cuBLAS parameter would otherwise ask the driver 215 times).
MIN_STRUCT_ADDRESS = 1 << 32
# What cuMemGetAddressRange answers for an address no allocation holds.
_NOT_AN_ALLOCATION = (driver.CUresult.CUDA_ERROR_NOT_FOUND,
                      driver.CUresult.CUDA_ERROR_INVALID_VALUE)


def allocation_of(address: int, strict: bool = True) -> Allocation | None:
    """(base, size) of the live device allocation holding `address`, else None. `strict`:
    a failed lookup (not "no allocation here") raises; else it is None too (reading a
    graph asks about every 8-byte value, most of them not addresses at all)."""
    if not 0 < address < 1 << 64:
        return None
    err, base, size = driver.cuMemGetAddressRange(address)
    if err in _NOT_AN_ALLOCATION or (err != driver.CUresult.CUDA_SUCCESS and not strict):
        return None
    # Any other failure (no current context, say) must not read as "freed": raise it.
    check(err, "cuMemGetAddressRange", hint="check pointers with the graph's context current")
    return int(base), int(size)


def _extra_buffer(extra: int) -> tuple[int, int] | None:
    """(address, size) of the parameter buffer an `extra` array names, else None."""
    words = (ctypes.c_uint64 * (2 * _MAX_EXTRA)).from_address(extra)
    buffer, size = 0, None
    for i in range(0, 2 * _MAX_EXTRA, 2):
        key = words[i]
        if key == _END:
            break
        if key == _BUFFER_POINTER:
            buffer = words[i + 1]
        elif key == _BUFFER_SIZE and words[i + 1]:
            size = ctypes.c_size_t.from_address(words[i + 1]).value
    return (buffer, size) if buffer and size is not None else None


def param_bytes(params: KernelNodeParams, layout: list[tuple[int, int]]) -> list[bytes] | str:
    """Each parameter's bytes (CUDA_KERNEL_NODE_PARAMS and the (offset, size) layout), or
    why they cannot be read."""
    pointers = int(params.kernelParams or 0)
    if pointers:
        slots = (ctypes.c_uint64 * len(layout)).from_address(pointers)
        if not all(slots):
            return "the driver's kernelParams array holds a null pointer"
        return [ctypes.string_at(slots[i], size) for i, (_off, size) in enumerate(layout)]
    extra = int(params.extra or 0)
    found = _extra_buffer(extra) if extra else None
    if found is None:
        return "the driver gave neither kernelParams nor an extra parameter buffer"
    buffer, size = found
    if any(off + n > size for off, n in layout):
        return "the extra parameter buffer is smaller than the parameter layout"
    return [ctypes.string_at(buffer + off, n) for off, n in layout]


def param_attrs(params: KernelNodeParams, func: CUfunction | None = None,
                kern: CUkernel | None = None,
                allocations: dict[int, Allocation | None] | None = None) -> JSONObject:
    """`param_values` and `param_pointers` of a kernel node (CUDA_KERNEL_NODE_PARAMS), or
    {"unread": {"param_values": why}}. `allocations` caches address lookups over a read."""
    if func is not None:
        layout = param_layout(func)
    elif kern is not None:
        layout = param_layout(kern, library_kernel=True)
    else:
        layout = []
    if not layout:
        return {UNREAD_ATTR: {PARAM_VALUES: "the driver gave no parameter layout"}}
    got = param_bytes(params, layout)
    if isinstance(got, str):
        return {UNREAD_ATTR: {PARAM_VALUES: got}}
    cache = allocations if allocations is not None else {}

    def lookup(address: int) -> Allocation | None:
        if address not in cache:
            cache[address] = allocation_of(address, strict=False)
        return cache[address]

    values: list[JSONValue] = [encode_param(b) for b in got]
    pointers: list[JSONValue] = []
    for i, (value, data) in enumerate(zip(values, got, strict=True)):
        if len(data) == 8 and isinstance(value, int):
            found = lookup(value)
            if found is not None:
                pointers.append([i, value - found[0], found[1]])
        elif len(data) > 8:  # a struct: its aligned words that point into an allocation
            for byte in range(0, len(data) - 7, 8):
                word = int.from_bytes(data[byte:byte + 8], "little")
                found = lookup(word) if word >= MIN_STRUCT_ADDRESS else None
                if found is not None:
                    pointers.append([i, word - found[0], found[1], byte, word])
    return {PARAM_VALUES: values, PARAM_POINTERS: pointers}


def dangling_pointers(snapshot: GraphSnapshot) -> tuple[DanglingPointer, ...]:
    """The pointer parameters of `snapshot` (read from a live graph in this process) that
    no longer lie in the allocation they lay in when it was read (freed, or freed and the
    address reused by another allocation), and 8-byte values among the graph's allocations
    that no live allocation holds (freed before the read). Run with the graph's context
    current, before a replay."""
    found = []
    cache: dict[int, Allocation | None] = {}

    def now(value: int, strict: bool = True) -> Allocation | None:
        if value not in cache:
            cache[value] = allocation_of(value, strict)
        return cache[value]

    for p in recorded_pointers(snapshot):
        got = now(p.value)
        if got is None:
            found.append(DanglingPointer(p.node, p.at, p.kernel, p.param, p.value, "freed",
                                         p.byte))
        elif (p.value - got[0], got[1]) != (p.offset, p.size):
            found.append(DanglingPointer(p.node, p.at, p.kernel, p.param, p.value, "reused",
                                         p.byte))
    found += [DanglingPointer(p.node, p.at, p.kernel, p.param, p.value, "unmapped")
              for p in unrecorded_in_span(snapshot) if now(p.value, strict=False) is None]
    return tuple(found)


__all__ = ["allocation_of", "dangling_pointers", "param_attrs", "param_bytes"]
