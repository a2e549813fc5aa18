"""Kernel parameter values in a snapshot, and the pointers among them that no longer point
into live memory. Pure.

A kernel node's reader records two value attributes (never hashed: they change with n and
with every allocation, and graphcert.model.kinds leaves unknown keys out of both
fingerprints):

- `param_values`: one entry per parameter, in order: an int (the bytes read as an unsigned
  little-endian number) for parameters of 1, 2, 4 or 8 bytes, else "hex:" and the bytes in
  memory order (at most MAX_VALUE_BYTES of them, then "...(+N bytes)");
- `param_pointers`: [parameter index, offset into its allocation, allocation size] for each
  8-byte parameter that pointed into a live device allocation when the graph was read, so
  that a later check can tell that the allocation is gone or is another one now; and
  [parameter index, offset, allocation size, byte offset in the parameter, value] for each
  aligned 8-byte word of a larger parameter (a struct: PyTorch's elementwise and cuBLAS's
  kernels pass their pointers packed in one) that did (the value is kept whole: a struct's
  hex entry may be cut at MAX_VALUE_BYTES).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from graphcert.errors import InputError
from graphcert.jsontypes import Doc, JSONObject
from graphcert.model.kinds import NodeKind
from graphcert.model.snapshot import GraphSnapshot, NodeRecord

PARAM_VALUES = "param_values"
PARAM_POINTERS = "param_pointers"
MAX_VALUE_BYTES = 256
SCALAR_SIZES = (1, 2, 4, 8)

ParamValue = int | str


def encode_param(data: bytes) -> ParamValue:
    """One parameter's bytes as its snapshot entry (see the module docstring)."""
    if len(data) in SCALAR_SIZES:
        return int.from_bytes(data, "little")
    head = data[:MAX_VALUE_BYTES].hex()
    more = len(data) - MAX_VALUE_BYTES
    return f"hex:{head}" + (f"...(+{more} bytes)" if more > 0 else "")


def format_param(value: object) -> str:
    """How inventory and diff show one parameter value: numbers of 2^32 or more (device
    pointers among them) in hex, smaller ones in decimal, byte strings as stored."""
    if isinstance(value, bool) or not isinstance(value, int):
        return "-" if value is None else str(value)
    return hex(value) if value >= 1 << 32 else str(value)


def pointer_indices(attrs: Doc) -> frozenset[int]:
    """Indices of the 8-byte parameters recorded as device pointers in a node's attrs (not
    the structs that hold pointers among other fields)."""
    found = attrs.get(PARAM_POINTERS)
    if not isinstance(found, list):
        return frozenset()
    return frozenset(p[0] for p in found
                     if isinstance(p, list) and len(p) == 3 and isinstance(p[0], int))


def param_changes(a: object, b: object) -> list[tuple[int, object, object]]:
    """(parameter index, value in a, value in b) for each parameter whose value differs;
    a parameter one side lacks has None there (as has a side that is no list)."""
    va: list[object] = a if isinstance(a, list) else []
    vb: list[object] = b if isinstance(b, list) else []
    out: list[tuple[int, object, object]] = []
    for i in range(max(len(va), len(vb))):
        x = va[i] if i < len(va) else None
        y = vb[i] if i < len(vb) else None
        if x != y:
            out.append((i, x, y))
    return out


def param_change_lines(a: object, b: object) -> list[str]:
    """"parameter 5: 1000 -> 1024" for each parameter whose value differs between two
    `param_values` lists."""
    return [f"parameter {i}: {format_param(x)} -> {format_param(y)}"
            for i, x, y in param_changes(a, b)]


Why = Literal["freed", "reused", "unmapped"]
WHY_TEXT: dict[Why, str] = {
    "freed": "no live allocation holds it any more (freed since capture)",
    "reused": "another allocation holds it now (freed and reused since capture)",
    "unmapped": "it lies among this graph's device allocations but no live allocation "
                "holds it (freed before the graph was read)",
}


@dataclass(frozen=True)
class DanglingPointer:
    """A captured kernel parameter that no longer points into the allocation it pointed
    into when the graph was read: `node` is the canonical index of the top-level node that
    holds it, `at` the full path ("7" or, inside bodies, "8[0].2" as the inventory numbers
    nodes), `param` the parameter index, `value` the pointer, `why` freed or reused;
    `byte` the pointer's byte offset inside a struct parameter (None: the parameter is the
    pointer)."""

    node: int
    at: str
    kernel: str | None
    param: int
    value: int
    why: Why
    byte: int | None = None

    def line(self) -> str:
        """One line naming node, kernel and parameter."""
        name = f" ({self.kernel})" if self.kernel else ""
        where = "" if self.byte is None else f" (the pointer at byte {self.byte})"
        return (f"node {self.at}{name} parameter {self.param}{where} = {self.value:#x}: "
                f"{WHY_TEXT[self.why]}")

    def to_json(self) -> JSONObject:
        return {"node": self.node, "at": self.at, "kernel": self.kernel, "param": self.param,
                "value": self.value, "why": self.why, "byte": self.byte}

    @classmethod
    def from_json(cls, d: object) -> DanglingPointer:
        """The finding a `to_json` document holds; anything else is an InputError."""
        # the subscript, int() or str() that fails on a value of the wrong shape says what
        # is wrong, so the document is read untyped and typed by those conversions
        raw: Any = d
        try:
            why = raw["why"]
            if why not in WHY_TEXT:
                raise ValueError(why)
            byte = raw.get("byte")
            return cls(int(raw["node"]), str(raw["at"]), raw.get("kernel"), int(raw["param"]),
                       int(raw["value"]), why, None if byte is None else int(byte))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"not a dangling-pointer finding: {exc}") from None


@dataclass(frozen=True)
class RecordedPointer:
    """One pointer parameter as recorded: where, its value, offset and allocation size."""

    node: int
    at: str
    kernel: str | None
    param: int
    value: int
    offset: int
    size: int
    byte: int | None = None  # the pointer's byte offset inside a struct parameter


def kernel_nodes(s: GraphSnapshot) -> Iterator[tuple[NodeRecord, str, int]]:
    """(kernel node, its path, its top-level node's index) over the snapshot, bodies and
    child graphs included; paths as the inventory numbers nodes ("7", "7.1", "8[0].2")."""
    yield from _walk(s.nodes, "", None)


def _walk(nodes: Sequence[NodeRecord], prefix: str, top: int | None
          ) -> Iterator[tuple[NodeRecord, str, int]]:
    for n in nodes:
        at = f"{prefix}{n.index}"
        owner = n.index if top is None else top
        if n.kind is NodeKind.KERNEL:
            yield n, at, owner
        for j, child in enumerate(n.children):
            sub = "." if n.kind is NodeKind.GRAPH else f"[{j}]."
            yield from _walk(child.nodes, f"{at}{sub}", owner)


def recorded_pointers(s: GraphSnapshot) -> Iterator[RecordedPointer]:
    """Every recorded pointer parameter of the snapshot's kernels, bodies included."""
    for n, at, owner in kernel_nodes(s):
        values = n.attrs.get(PARAM_VALUES)
        found = n.attrs.get(PARAM_POINTERS)
        if not isinstance(values, list) or not isinstance(found, list):
            continue
        for entry in found:
            if not (isinstance(entry, list) and len(entry) in (3, 5)
                    and all(isinstance(x, int) and not isinstance(x, bool) for x in entry)):
                continue
            if len(entry) == 5:  # a pointer inside a struct parameter: its value is kept
                i, offset, size, byte, value = entry
                if 0 <= i < len(values):
                    yield RecordedPointer(owner, at, n.name, i, value, offset, size, byte)
                continue
            i, offset, size = entry
            if 0 <= i < len(values) and isinstance(values[i], int):
                yield RecordedPointer(owner, at, n.name, i, values[i], offset, size)


def unrecorded_in_span(s: GraphSnapshot) -> Iterator[RecordedPointer]:
    """8-byte parameter values not recorded as pointers that lie between the lowest and the
    highest address of the allocations the recorded pointers lie in: device addresses, most
    likely, whose allocation was gone when the graph was read (offset and size are 0)."""
    spans = [(p.value - p.offset, p.value - p.offset + p.size) for p in recorded_pointers(s)]
    if not spans:
        return
    low, high = min(a for a, _ in spans), max(b for _, b in spans)
    for n, at, owner in kernel_nodes(s):
        values = n.attrs.get(PARAM_VALUES)
        sizes = n.attrs.get("param_sizes")
        if not isinstance(values, list) or not isinstance(sizes, list):
            continue
        known = pointer_indices(n.attrs)
        for i, (value, size) in enumerate(zip(values, sizes, strict=False)):
            if (size == 8 and i not in known and isinstance(value, int)
                    and not isinstance(value, bool) and low <= value < high):
                yield RecordedPointer(owner, at, n.name, i, value, 0, 0)


__all__ = ["MAX_VALUE_BYTES", "PARAM_POINTERS", "PARAM_VALUES", "WHY_TEXT", "DanglingPointer",
           "ParamValue", "RecordedPointer", "encode_param", "format_param", "kernel_nodes",
           "param_change_lines", "param_changes", "pointer_indices", "recorded_pointers",
           "unrecorded_in_span"]
