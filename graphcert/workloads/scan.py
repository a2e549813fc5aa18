"""`scan`: exclusive prefix sum over u32 (wrapping add), recursive multi-block, block 256.

Levels: the input (capacity elements), then one sum per 256-element scan block,
recursively, until one scan block remains. Kernels: one `scan_block_sums` per level below
the top going down, one `scan_single_block` for the top, one `scan_add_offsets` per level
below the top going up — 1 + 2 per extra level, predicted by `scan_kernel_count`
(257 → 3, 65,537 → 5). For bandwidth each CUDA block (256 threads) handles SCAN_TILES
consecutive scan blocks with 16-byte accesses; that changes grid sizes, never the fan-in
of a level, so the count is unaffected.

Every kernel takes the true n (and its level's fixed shift) and derives its own level's
length from n on the device, so n is the sole size-dependent parameter of every node and
the scratch levels are sized by capacity alone. `scan_size_params(capacity)` names those
parameters (scale 1) for the kernels a graph of that capacity contains: up to 256 elements
there is only `scan_single_block`, so naming the other two would point at absent nodes.

This module imports no CUDA: buffers and kernels come from the RunContext in setup().
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from graphcert.workloads import memo
from graphcert.workloads.base import SizeParam, Tolerance

if TYPE_CHECKING:
    from graphcert.cuda.context import RunContext
    from graphcert.cuda.memory import DeviceBuffer
    from graphcert.cuda.module import PreparedLaunch
    from graphcert.cuda.stream import Stream

SCAN_SOURCE = "scan.cu"
INPUT_SALT = 0x5CA4
SCAN_BLOCK = 256  # threads per block AND elements per scan block: the node-count rule's fan-in
SCAN_TILES = 8  # scan blocks per CUDA block (SCAN_TILES in scan.cu): loads in flight per thread
_LEVEL_SHIFT = 8  # log2(SCAN_BLOCK)

# Each scan kernel's parameter holding the true n (every node of these kernels, all levels).
SCAN_SIZE_PARAMS: tuple[SizeParam, ...] = (
    SizeParam("scan_block_sums", 2),
    SizeParam("scan_single_block", 2),
    SizeParam("scan_add_offsets", 3),
)


def scan_levels(length: int) -> list[int]:
    """Element count of every level: [length, ceil(length/256), ...] down to one block."""
    if length <= 0:
        return []
    levels = [length]
    while levels[-1] > SCAN_BLOCK:
        levels.append(-(-levels[-1] // SCAN_BLOCK))
    return levels


def scan_kernel_count(length: int) -> int:
    """Kernel launches of a scan over `length` elements: 0, or 1 + 2 per extra level."""
    levels = len(scan_levels(length))
    return 0 if levels == 0 else 2 * levels - 1


def scan_size_params(capacity: int | None = None) -> tuple[SizeParam, ...]:
    """The size parameters of a scan graph for `capacity` (None: of every capacity)."""
    if capacity is not None and len(scan_levels(capacity)) <= 1:
        return tuple(p for p in SCAN_SIZE_PARAMS if p.kernel == "scan_single_block")
    return SCAN_SIZE_PARAMS


def exclusive_scan(values: np.ndarray) -> np.ndarray:
    """numpy reference: exclusive prefix sum of u32 values, wrapping modulo 2^32."""
    v = np.asarray(values, dtype=np.uint32)
    out = np.zeros(v.size, dtype=np.uint32)
    if v.size > 1:
        # uint64 cannot overflow here (2^32 elements of < 2^32); wrap explicitly afterwards.
        inclusive = np.cumsum(v[:-1], dtype=np.uint64) & np.uint64(0xFFFFFFFF)
        out[1:] = inclusive.astype(np.uint32)
    return out


def scan_input(seed: int, capacity: int) -> np.ndarray:
    """The seeded u32 input of a class (full range, so the sum wraps); cached, read-only."""
    return memo.cached(("scan.input", seed, capacity), lambda: np.random.default_rng(
        [seed, INPUT_SALT]).integers(0, 2**32, size=capacity, dtype=np.uint32))


def scan_reference(seed: int, capacity: int, n: int) -> np.ndarray:
    """exclusive_scan(input[:n]): a prefix of the class's one scan at the capacity, since an
    exclusive scan is prefix-closed (bit-identical, integers)."""
    full = memo.cached(("scan.reference", seed, capacity),
                       lambda: exclusive_scan(scan_input(seed, capacity)))
    return full[:n]


class ScanPlan:
    """The scratch levels and kernels of a scan over up to `capacity` u32, reusable by other
    workloads (join scans its match counts with it). Construct it inside setup()."""

    def __init__(self, ctx: RunContext, capacity: int):
        if capacity < 1:
            raise ValueError(f"scan capacity must be at least 1, got {capacity}")
        self.capacity = int(capacity)
        self.levels = scan_levels(self.capacity)
        # Level k >= 1 lives in scratch[k - 1]: the block sums of level k - 1, later scanned
        # in place into the offsets that level k - 1 adds back.
        self.scratch: list[DeviceBuffer] = [ctx.alloc(4 * length) for length in self.levels[1:]]
        self._sums = ctx.kernel(SCAN_SOURCE, "scan_block_sums")
        self._single = ctx.kernel(SCAN_SOURCE, "scan_single_block")
        self._add = ctx.kernel(SCAN_SOURCE, "scan_add_offsets")
        self._cached: tuple[tuple[int, int, int], list[PreparedLaunch]] | None = None
        self.tiles = SCAN_TILES  # must equal the kernels' SCAN_TILES

    @property
    def kernel_count(self) -> int:
        return scan_kernel_count(self.capacity)

    @staticmethod
    def bytes_needed(capacity: int) -> int:
        """Scratch bytes of a plan for `capacity` (the caller's in/out buffers excluded)."""
        return 4 * sum(scan_levels(capacity)[1:])

    def record(self, stream: Stream, in_buf: DeviceBuffer, out_buf: DeviceBuffer,
               n: int) -> None:
        """Enqueue out[i] = in[0] + ... + in[i-1] for i < n (capturable; `in_buf` is kept).
        Buffers must be 16-byte aligned (the kernels move 4 elements at a time); every
        DeviceBuffer is."""
        for launch in self._launches(in_buf, out_buf, n):
            launch.launch(stream)

    def _launches(self, in_buf: DeviceBuffer, out_buf: DeviceBuffer,
                  n: int) -> list[PreparedLaunch]:
        # Packed once per (buffers, n): a timed stream loop then pays only for the launches.
        if not 0 <= n <= self.capacity:
            raise ValueError(f"scan of n={n} does not fit capacity {self.capacity}")
        key = (in_buf.ptr, out_buf.ptr, n)
        if self._cached is not None and self._cached[0] == key:
            return self._cached[1]
        top = len(self.levels) - 1
        n32 = np.uint32(n)
        src: list[Any] = [in_buf, *self.scratch]  # input of each level
        dst: list[Any] = [out_buf, *self.scratch]  # output of each level (in place above 0)
        launches = []
        for level in range(top):  # down: block sums of each level feed the one above
            launches.append(self._sums.prepare(self._grid(level), SCAN_BLOCK, src[level],
                                               self.scratch[level], n32, self._shift(level)))
        launches.append(self._single.prepare(1, SCAN_BLOCK, src[top], dst[top], n32,
                                             self._shift(top)))
        for level in reversed(range(top)):  # up: scan each block, add the level's offsets
            launches.append(self._add.prepare(self._grid(level), SCAN_BLOCK, src[level],
                                              dst[level], self.scratch[level], n32,
                                              self._shift(level)))
        self._cached = (key, launches)
        return launches

    def _grid(self, level: int) -> int:
        return -(-self.levels[level] // (SCAN_BLOCK * self.tiles))

    @staticmethod
    def _shift(level: int) -> np.uint32:
        return np.uint32(_LEVEL_SHIFT * level)

    def free(self) -> None:
        for buf in self.scratch:
            buf.free()
        self.scratch = []
        self._cached = None


class Scan:
    """Exclusive prefix sum of seeded random u32 (full range, so the sum wraps)."""

    name = "scan"
    description = "exclusive prefix sum over u32, recursive multi-block (block 256)"
    kernel_files: tuple[str, ...] = (SCAN_SOURCE,)
    tolerance = Tolerance()

    def __init__(self) -> None:
        self._capacity: int | None = None
        self._plan: ScanPlan | None = None
        self._host: np.ndarray | None = None
        self._seed = 0
        self._in: DeviceBuffer | None = None
        self._out: DeviceBuffer | None = None

    @property
    def size_params(self) -> tuple[SizeParam, ...]:
        """n's parameters in the graph of the class set up last (before setup: all)."""
        return scan_size_params(self._capacity)

    def predict(self, capacity: int) -> dict[str, int]:
        return {"kernel": scan_kernel_count(capacity)}

    def bytes_needed(self, capacity: int) -> int:
        return 8 * capacity + ScanPlan.bytes_needed(capacity)

    def setup(self, ctx: RunContext, capacity: int) -> None:
        self._capacity = capacity
        self._seed = ctx.seed
        self._host = scan_input(ctx.seed, capacity)
        self._in = ctx.upload(self._host)
        # Poisoned, so a run that skips an element cannot pass on a previous run's answer.
        self._out = ctx.upload(np.full(capacity, 0xDEADBEEF, dtype=np.uint32))
        self._plan = ScanPlan(ctx, capacity)

    def record(self, stream: Stream, n: int) -> None:
        assert self._plan is not None and self._in is not None and self._out is not None
        self._plan.record(stream, self._in, self._out, n)

    def outputs(self, n: int) -> dict[str, np.ndarray]:
        assert self._out is not None
        return {"prefix": self._out.download(np.uint32, n)}

    def reference(self, n: int) -> dict[str, np.ndarray]:
        assert self._host is not None and self._capacity is not None
        return {"prefix": scan_reference(self._seed, self._capacity, n)}

    def teardown(self) -> None:
        if self._plan is not None:
            self._plan.free()
        for buf in (self._in, self._out):
            if buf is not None:
                buf.free()
        self._plan = self._in = self._out = None
        self._host = None
