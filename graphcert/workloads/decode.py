"""`decode`: a launch-bound chain shaped like one decode step of a small transformer.

n token rows of `hidden` float32 go through `layers` layers of five small kernels each
(kernels/decode.cu): RMSNorm, matrix-vector product with a hidden x hidden weight, bias
add, GELU (tanh approximation), residual add: 5 * layers kernel nodes, nothing else.

Buffers: x0 (the seeded input rows, never written), x (the residual stream, the output),
h and z (per-layer scratch). Layer 0 reads x0 and writes x = x0 + z; later layers update x
in place, so every replay of the graph starts from x0 and gives the same answer without a
copy node. Launch geometry comes from the capacity; n is each kernel's size argument.

The weights, gains and biases are seeded independently of the capacity (the same "model"
for every class). Input rows come from a seeded pool of at most 2^16 distinct rows: a class
up to 2^16 gets them all in order, a larger class gets a seeded random pool row per row.
Rows are independent, so the float64 reference runs once over the pool and is gathered per
row: O(pool) host work instead of O(n) (2^22 rows take tens of seconds of numpy), while every
GPU row is still checked against its own exact expected value. A class below 2^16 draws a
prefix of the same pool, so one pool reference per (seed, layers, hidden) serves every class
of a process (memo.py), and each class gathers its rows once: every n is a prefix. Only a bug
that swaps two rows that happen to share a pool row (chance 2^-16 per pair) could hide.

This module imports no CUDA: buffers and kernels come from the RunContext in setup().
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from graphcert.errors import InputError
from graphcert.workloads import memo
from graphcert.workloads.base import SizeParam, Tolerance

if TYPE_CHECKING:
    from graphcert.cuda.context import RunContext
    from graphcert.cuda.memory import DeviceBuffer
    from graphcert.cuda.module import Kernel, PreparedLaunch
    from graphcert.cuda.stream import Stream

DECODE_SOURCE = "decode.cu"
BLOCK = 256  # a multiple of 32: dc_rmsnorm gives each row one whole warp
ROWS_PER_BLOCK = BLOCK // 32
EPS = 1e-5
INPUT_SALT, MODEL_SALT = 0xDEC0, 0xDEC1
_KERNELS = ("dc_rmsnorm", "dc_matvec", "dc_bias", "dc_gelu", "dc_residual")
_REFERENCE_ROWS = 1 << 14  # rows per chunk of the float64 reference
POOL_ROWS = 1 << 16  # distinct input rows at most (see the module docstring)
_GELU_K = float(np.sqrt(2.0 / np.pi))


def decode_reference(x0: np.ndarray, gains: np.ndarray, weights: np.ndarray,
                     biases: np.ndarray, eps: float = EPS) -> np.ndarray:
    """The layer stack in float64 from the same float32 inputs, cast to float32 at the end.

    Rows are independent, so it runs in chunks (host memory stays small, the chunk stays
    in cache) with in-place arithmetic: the cost is in the matrix products."""
    out = np.empty(x0.shape, dtype=np.float32)
    g, w, b = (a.astype(np.float64) for a in (gains, weights, biases))
    hidden = x0.shape[1]
    for start in range(0, x0.shape[0], _REFERENCE_ROWS):
        x = x0[start:start + _REFERENCE_ROWS].astype(np.float64)
        for layer in range(w.shape[0]):
            rms = np.einsum("ij,ij->i", x, x)[:, None]  # RMSNorm
            rms /= hidden
            rms += eps
            np.sqrt(rms, out=rms)
            z = (x / rms * g[layer]) @ w[layer]  # matvec
            z += b[layer]  # bias
            t = z * z  # GELU, tanh approximation
            t *= 0.044715 * z
            t += z
            t *= _GELU_K
            np.tanh(t, out=t)
            t += 1.0
            t *= 0.5 * z
            x += t  # residual
        out[start:start + x.shape[0]] = x
    return out


def decode_model(seed: int, layers: int, hidden: int) -> dict[str, np.ndarray]:
    """Seeded gains (near 1), weights (unit-variance outputs) and biases, float32, cached."""
    return memo.cached(("decode.model", seed, layers, hidden), lambda: draw_model(
        np.random.default_rng([seed, MODEL_SALT]), layers, hidden))


def draw_model(rng: np.random.Generator, layers: int, hidden: int) -> dict[str, np.ndarray]:
    """The model's arrays drawn from `rng`."""
    L, H = layers, hidden
    return {
        "gains": (1.0 + 0.1 * rng.standard_normal((L, H))).astype(np.float32),
        "weights": (rng.standard_normal((L, H, H)) / np.sqrt(H)).astype(np.float32),
        "biases": (0.1 * rng.standard_normal((L, H))).astype(np.float32),
    }


def _full_pool(seed: int, hidden: int) -> tuple[np.ndarray, Any]:
    """All POOL_ROWS pool rows and the generator state after drawing them. A class below
    POOL_ROWS draws a prefix of the same stream, so its pool is a prefix of this one."""
    def draw() -> tuple[np.ndarray, Any]:
        rng = np.random.default_rng([seed, INPUT_SALT])
        # Uniform in [-1, 1): as good as normal rows after RMSNorm, and cheaper to draw.
        pool = rng.random((POOL_ROWS, hidden), dtype=np.float32)
        pool *= 2
        pool -= 1
        return pool, rng.bit_generator.state
    return memo.cached(("decode.pool", seed, hidden), draw)


def decode_inputs(seed: int, capacity: int, hidden: int) -> tuple[np.ndarray, np.ndarray]:
    """(pool, rows) of a class: input row i is pool[rows[i]] (see the module docstring)."""
    full, state = _full_pool(seed, hidden)
    if capacity <= POOL_ROWS:
        return full[:capacity], np.arange(capacity)

    def draw() -> np.ndarray:
        rng = np.random.default_rng()
        rng.bit_generator.state = state  # where the class's own draw would stand
        return rng.integers(0, POOL_ROWS, capacity)
    return full, memo.cached(("decode.rows", seed, capacity, hidden), draw)


def decode_pool_reference(seed: int, layers: int, hidden: int) -> np.ndarray:
    """decode_reference over every pool row, once per (seed, layers, hidden)."""
    def build() -> np.ndarray:
        pool, _ = _full_pool(seed, hidden)
        m = decode_model(seed, layers, hidden)
        return decode_reference(pool, m["gains"], m["weights"], m["biases"])
    return memo.cached(("decode.reference", seed, layers, hidden), build)


class Decode:
    """L layers of norm, matvec, bias, activation and residual over n rows of width H."""

    name = "decode"
    description = "one decoder step: L layers of norm, matvec, bias, activation, residual"
    kernel_files: tuple[str, ...] = (DECODE_SOURCE,)
    # n is the fourth argument of norm, matvec and residual, the third of bias, the second
    # of gelu (see each signature in kernels/decode.cu).
    size_params: tuple[SizeParam, ...] = (
        SizeParam("dc_rmsnorm", 3),
        SizeParam("dc_matvec", 3),
        SizeParam("dc_bias", 2),
        SizeParam("dc_gelu", 1),
        SizeParam("dc_residual", 3),
    )
    # Float32 on the GPU against a float64 reference: per layer a 64-term dot product (its
    # summation order and FMA contraction differ from numpy's), a float32 norm and tanh
    # (~2 ulp), over 4 layers, on outputs of magnitude up to ~10. A float32 numpy emulation
    # over 2^16 rows errs by at most ~3e-6 absolute, 1/8 of what this tolerance allows at
    # that element (tests/test_workloads_cpu_b.py asserts < 1/2), while a real bug (a
    # layer's bias left out, a wrong row or weight) is off by 1e-2 or more. atol covers
    # outputs near 0, where a relative bound means nothing.
    tolerance = Tolerance(rtol=1e-4, atol=1e-5)

    def __init__(self, layers: int = 4, hidden: int = 64):
        for label, value in (("layers", layers), ("hidden", hidden)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{label} must be an integer >= 1, got {value!r}")
        self.layers = layers
        self.hidden = hidden
        self._host: dict[str, np.ndarray] = {}
        self._bufs: dict[str, DeviceBuffer] = {}
        self._download: np.ndarray | None = None
        self._kernels: dict[str, Kernel] = {}
        self._class_reference: np.ndarray | None = None
        self._seed = 0
        self._capacity = 0
        self._cached: tuple[int, list[PreparedLaunch]] | None = None

    def predict(self, capacity: int) -> dict[str, int]:
        return {"kernel": len(_KERNELS) * self.layers}

    def bytes_needed(self, capacity: int) -> int:
        rows = 4 * capacity * self.hidden * 4  # x0, x, h, z
        model = 4 * self.layers * (self.hidden * self.hidden + 2 * self.hidden)
        return rows + model

    def model(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Seeded gains (near 1), weights (unit-variance outputs) and biases, float32."""
        return draw_model(rng, self.layers, self.hidden)

    def setup(self, ctx: RunContext, capacity: int) -> None:
        self._capacity = int(capacity)
        H = self.hidden
        self._seed = ctx.seed
        self._host = dict(decode_model(ctx.seed, self.layers, H))
        pool, rows = decode_inputs(ctx.seed, self._capacity, H)
        self._host.update(pool=pool, rows=rows)
        self._class_reference = None
        self._bufs = {"x0": ctx.upload(pool[rows])}
        self._bufs.update({name: ctx.upload(self._host[name])
                           for name in ("gains", "weights", "biases")})
        # The output is poisoned with NaN, so a run that skips a row cannot pass on an
        # earlier answer; h and z are written before they are read.
        self._bufs["x"] = ctx.upload(np.full((self._capacity, H), np.nan, dtype=np.float32))
        for name in ("h", "z"):
            self._bufs[name] = ctx.alloc(4 * self._capacity * H)
        self._kernels = {name: ctx.kernel(DECODE_SOURCE, name) for name in _KERNELS}
        self._cached = None

    def record(self, stream: Stream, n: int) -> None:
        for launch in self._launches(n):
            launch.launch(stream)

    def _launches(self, n: int) -> list[PreparedLaunch]:
        # Packed once per n, so a timed stream loop pays only for the launches themselves.
        if not self._bufs:
            raise RuntimeError("decode: record() before setup()")
        if not 0 <= n <= self._capacity:
            raise ValueError(f"decode: n={n} does not fit capacity {self._capacity}")
        if self._cached is not None and self._cached[0] == n:
            return self._cached[1]
        b, k, H = self._bufs, self._kernels, self.hidden
        n32, h32 = np.uint32(n), np.uint32(H)
        norm_grid = max(1, -(-self._capacity // ROWS_PER_BLOCK))
        flat_grid = max(1, -(-self._capacity * H // BLOCK))
        launches = []
        for layer in range(self.layers):
            src = b["x0"] if layer == 0 else b["x"]
            gain = np.uint64(b["gains"].ptr + 4 * H * layer)
            weight = np.uint64(b["weights"].ptr + 4 * H * H * layer)
            bias = np.uint64(b["biases"].ptr + 4 * H * layer)
            launches += [
                k["dc_rmsnorm"].prepare(norm_grid, BLOCK, src, gain, b["h"], n32, h32,
                                        np.float32(EPS)),
                k["dc_matvec"].prepare(flat_grid, BLOCK, b["h"], weight, b["z"], n32, h32),
                k["dc_bias"].prepare(flat_grid, BLOCK, b["z"], bias, n32, h32),
                k["dc_gelu"].prepare(flat_grid, BLOCK, b["z"], n32, h32),
                k["dc_residual"].prepare(flat_grid, BLOCK, src, b["z"], b["x"], n32, h32),
            ]
        self._cached = (n, launches)
        return launches

    def outputs(self, n: int) -> dict[str, np.ndarray]:
        # One host array per class, reused by every sample: verify downloads up to 256 MiB
        # twice per sample, and fresh pages cost more to fault in than to copy into.
        if self._download is None or self._download.size < self._capacity * self.hidden:
            self._download = np.empty(self._capacity * self.hidden, dtype=np.float32)
        out = self._bufs["x"].download(np.float32, n * self.hidden, into=self._download)
        return {"x": out.reshape(n, self.hidden)}

    def reference(self, n: int) -> dict[str, np.ndarray]:
        if self._class_reference is None:  # once per class: every n is a prefix of it
            pool_reference = decode_pool_reference(self._seed, self.layers, self.hidden)
            if self._capacity <= POOL_ROWS:  # rows are 0..capacity-1: no gather
                self._class_reference = pool_reference[:self._capacity]
            else:
                self._class_reference = memo.frozen(
                    np.take(pool_reference, self._host["rows"], axis=0))
        return {"x": self._class_reference[:n]}

    def teardown(self) -> None:
        for buf in self._bufs.values():
            buf.free()
        self._bufs, self._host, self._kernels = {}, {}, {}
        self._class_reference = self._download = None
        self._cached = None
