"""`resident`: resident dispatch in one recording — parameter upload, clear, kernel, readback.

    memcpy  host->device   the parameter block (a, b) from pinned memory
    memset                 y[0:capacity] = 0
    kernel  resident_axpb  y[i] += a * x[i] + b for i < n   (u32, wrapping)
    memcpy  device->host   y[0:capacity] into pinned memory; outputs() reads it there

The copy and memset sizes are the class capacity, not n, so every n of a class gives the
same graph shape (readback past n is padding, never compared). Only the kernel's n
parameter changes with n. The kernel accumulates onto the cleared y, so the memset node is
part of the answer: a replay without it would double-count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphcert.workloads import memo
from graphcert.workloads.base import SizeParam, Tolerance

if TYPE_CHECKING:
    from graphcert.cuda.context import RunContext
    from graphcert.cuda.memory import DeviceBuffer, PinnedBuffer
    from graphcert.cuda.module import Kernel, PreparedLaunch
    from graphcert.cuda.stream import Stream

RESIDENT_SOURCE = "resident.cu"
_BLOCK = 256
_PARAM_BYTES = 16  # a, b and two words of padding: one aligned 16-byte upload


INPUT_SALT = 0x2E5


def resident_inputs(seed: int, capacity: int) -> tuple[int, int, np.ndarray]:
    """(a, b, x) of a class: seeded u32, x read-only and cached."""
    def draw() -> tuple[int, int, np.ndarray]:
        rng = np.random.default_rng([seed, INPUT_SALT])
        a, b = (int(v) for v in rng.integers(0, 2**32, size=2, dtype=np.uint32))
        return a, b, rng.integers(0, 2**32, size=capacity, dtype=np.uint32)
    return memo.cached(("resident.inputs", seed, capacity), draw)


def resident_reference(seed: int, capacity: int, n: int) -> np.ndarray:
    """y = a*x + b (mod 2^32) for x[:n]: a prefix of the class's one pass (elementwise)."""
    def full() -> np.ndarray:
        a, b, x = resident_inputs(seed, capacity)
        y = (np.uint64(a) * x.astype(np.uint64) + np.uint64(b)) & np.uint64(0xFFFFFFFF)
        return y.astype(np.uint32)
    return memo.cached(("resident.reference", seed, capacity), full)[:n]


class Resident:
    """y = a*x + b with its parameters uploaded and its result read back inside the graph."""

    name = "resident"
    description = "parameter upload, memset clear, kernel, readback (memcpy + memset nodes)"
    kernel_files: tuple[str, ...] = (RESIDENT_SOURCE,)
    size_params: tuple[SizeParam, ...] = (SizeParam("resident_axpb", 3),)
    tolerance = Tolerance()

    def __init__(self) -> None:
        self._capacity = 0
        self._a = self._b = 0
        self._seed = 0
        self._x: np.ndarray | None = None
        self._kernel: Kernel | None = None
        self._dev: dict[str, DeviceBuffer] = {}
        self._host: dict[str, PinnedBuffer] = {}
        self._cached: tuple[int, PreparedLaunch] | None = None  # packed once per n

    def predict(self, capacity: int) -> dict[str, int]:
        return {"kernel": 1, "memcpy": 2, "memset": 1}

    def bytes_needed(self, capacity: int) -> int:
        return 8 * capacity + _PARAM_BYTES

    def setup(self, ctx: RunContext, capacity: int) -> None:
        self._capacity = capacity
        self._seed = ctx.seed
        self._a, self._b, self._x = resident_inputs(ctx.seed, capacity)
        params = ctx.pinned(_PARAM_BYTES)
        params.array(np.uint32)[:] = [self._a, self._b, 0, 0]
        readback = ctx.pinned(4 * capacity)
        readback.array(np.uint32)[:] = 0xDEADBEEF  # poison: a readback that never ran shows
        self._host = {"params": params, "y": readback}
        self._dev = {"params": ctx.alloc(_PARAM_BYTES), "x": ctx.upload(self._x),
                     "y": ctx.alloc(4 * capacity)}
        self._kernel = ctx.kernel(RESIDENT_SOURCE, "resident_axpb")
        self._cached = None

    def record(self, stream: Stream, n: int) -> None:
        if not 0 <= n <= self._capacity:
            raise ValueError(f"resident of n={n} does not fit capacity {self._capacity}")
        assert self._kernel is not None
        d, h, cap = self._dev, self._host, self._capacity
        d["params"].copy_from_host_async(h["params"], _PARAM_BYTES, stream)
        d["y"].memset_u32_async(0, cap, stream)
        if self._cached is None or self._cached[0] != n:
            self._cached = (n, self._kernel.prepare(-(-cap // _BLOCK), _BLOCK, d["params"],
                                                    d["x"], d["y"], np.uint32(n)))
        self._cached[1].launch(stream)
        d["y"].copy_to_host_async(h["y"], 4 * cap, stream)

    def outputs(self, n: int) -> dict[str, np.ndarray]:
        return {"y": self._host["y"].array(np.uint32, n).copy()}

    def reference(self, n: int) -> dict[str, np.ndarray]:
        assert self._x is not None
        return {"y": resident_reference(self._seed, self._capacity, n)}

    def teardown(self) -> None:
        for dev in self._dev.values():
            dev.free()
        for host in self._host.values():
            host.free()
        self._dev, self._host = {}, {}
        self._kernel = None
        self._cached = None
        self._x = None
