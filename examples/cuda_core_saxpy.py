"""A user workload that compiles and launches its kernel with cuda.core on graphcert's stream.

    graphcert capture examples/cuda_core_saxpy.py:Saxpy --size 100000
    graphcert verify  "examples/cuda_core_saxpy.py:Saxpy[a=0.5]"

out = a * x + y over float32. graphcert hands record() its own stream; cuda.core takes it
through the `__cuda_stream__` protocol, so the launch lands on the stream graphcert
captures. Everything that allocates or loads code happens in setup(), never in record().
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from graphcert.workloads.base import SizeParam, Tolerance

if TYPE_CHECKING:
    from graphcert.cuda.context import RunContext
    from graphcert.cuda.stream import Stream

SOURCE = r"""
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out,
                                 unsigned int n) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
"""
BLOCK = 256


class _ForeignStream:
    """Presents graphcert's stream to cuda.core (protocol version 0, the CUstream address)."""

    def __init__(self, address: int):
        self.address = address

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.address)


class Saxpy:
    """out = a * x + y, launched through cuda.core."""

    name = "saxpy"
    description = "out = a*x + y (float32), compiled and launched with cuda.core"
    kernel_files: tuple[str, ...] = ()  # the source is inline above
    size_params = (SizeParam("saxpy", 4),)  # n is the kernel's 5th parameter
    tolerance = Tolerance(rtol=1e-6, atol=1e-5)  # the GPU may fuse a*x + y into one FMA

    def __init__(self, a: float = 2.0):
        self.a = float(a)
        self._streams: dict[int, Any] = {}

    def predict(self, capacity: int) -> dict[str, int]:
        return {"kernel": 1}

    def setup(self, ctx: RunContext, capacity: int) -> None:
        from cuda.core import Device, LaunchConfig, Program, ProgramOptions

        # The same primary context graphcert uses, made current for cuda.core too.
        self._device = Device(ctx.device.index)
        self._device.set_current()
        options = ProgramOptions(arch=f"sm_{self._device.arch}", std="c++17")
        self._kernel = Program(SOURCE, "c++", options).compile("cubin").get_kernel("saxpy")
        rng = ctx.rng(0x5A)
        self._x = rng.standard_normal(capacity).astype(np.float32)
        self._y = rng.standard_normal(capacity).astype(np.float32)
        # graphcert's tracked buffers: freed by ctx.release_buffers() even if teardown is missed.
        self._dx, self._dy = ctx.upload(self._x), ctx.upload(self._y)
        self._dout = ctx.alloc(4 * capacity)
        self._config = LaunchConfig(grid=-(-capacity // BLOCK), block=BLOCK)
        self._capacity = capacity
        # cuda.core loads kernels into the context lazily: launch once now, outside capture.
        warm = self._device.create_stream()
        self._launch(warm, 0)
        warm.sync()
        warm.close()

    def record(self, stream: Stream, n: int) -> None:
        if stream.address not in self._streams:
            self._streams[stream.address] = self._device.create_stream(
                _ForeignStream(stream.address))
        self._launch(self._streams[stream.address], n)

    def _launch(self, stream: Any, n: int) -> None:
        from cuda.core import launch

        # Python ints are passed as pointers by cuda.core; scalars go as numpy types.
        launch(stream, self._config, self._kernel, np.float32(self.a), self._dx.ptr,
               self._dy.ptr, self._dout.ptr, np.uint32(n))

    def outputs(self, n: int) -> dict[str, np.ndarray]:
        return {"out": self._dout.download(np.float32, n)}

    def reference(self, n: int) -> dict[str, np.ndarray]:
        return {"out": np.float32(self.a) * self._x[:n] + self._y[:n]}

    def teardown(self) -> None:
        self._streams.clear()  # wrappers only: graphcert owns the stream itself
        for buf in (self._dx, self._dy, self._dout):
            buf.free()
