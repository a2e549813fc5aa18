"""A user workload whose recording is ordinary CuPy code, run on graphcert's stream.

    graphcert verify examples/cupy_scan.py:CupyScan --classes 2^0..2^16

Exclusive prefix sum over u32 by Hillis–Steele doubling: log2(capacity) steps of
`b[d:] = a[d:] + a[:-d]`, ping-ponging between two buffers.

The rules that make CuPy work capturable (DEVICE_FACTS: CuPy allocating during a capture
fails with "operation not permitted when stream is capturing"):

- allocate every output AND temporary in setup(); in record() only write into them with
  `out=` arguments, `copyto` and slices (views allocate nothing). `cupy.cumsum(x, out=y)`
  is NOT enough: its scan still allocates temporaries of its own;
- enqueue on graphcert's stream: wrap it with `cupy.cuda.Stream.from_external` (CuPy 14;
  it takes any object with `__cuda_stream__`) or, on older CuPy,
  `cupy.cuda.ExternalStream(stream.address)`, and make it current with `with`;
- run the recording once in setup(), so CuPy compiles and loads its kernels outside the
  capture.

Launch geometry is the class capacity: the scan always covers the whole buffer. Element i
of an exclusive scan depends only on elements before i, so the first n outputs are the scan
of the first n inputs, and n need not be a kernel parameter at all (no size_params).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from graphcert.workloads.base import Tolerance

if TYPE_CHECKING:
    from graphcert.cuda.context import RunContext
    from graphcert.cuda.stream import Stream


class _ForeignStream:
    """Presents graphcert's stream through the CUDA stream protocol (version 0, address)."""

    def __init__(self, address: int):
        self.address = address

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.address)


def _cupy_stream(address: int, device_id: int) -> Any:
    """A CuPy stream object for a stream CuPy does not own (it never destroys it)."""
    import cupy

    from_external = getattr(cupy.cuda.Stream, "from_external", None)
    if from_external is not None:  # CuPy 14+; ExternalStream is deprecated there
        return from_external(_ForeignStream(address))
    return cupy.cuda.ExternalStream(address, device_id)


class CupyScan:
    """Exclusive prefix sum of seeded random u32 with CuPy ufuncs (wrapping add)."""

    name = "cupy-scan"
    description = "exclusive prefix sum over u32 with CuPy (Hillis-Steele, out= arguments)"
    kernel_files: tuple[str, ...] = ()
    tolerance = Tolerance()

    def setup(self, ctx: RunContext, capacity: int) -> None:
        import cupy

        self._device_id = ctx.device.index
        cupy.cuda.Device(self._device_id).use()  # the primary context graphcert also uses
        self._capacity = capacity
        self._x_host = ctx.rng(0xC0).integers(0, 2**32, size=capacity, dtype=np.uint32)
        self._x = cupy.asarray(self._x_host)
        self._buffers: tuple[Any, ...] = (cupy.empty(capacity, dtype=cupy.uint32),
                                          cupy.empty(capacity, dtype=cupy.uint32))
        self._streams: dict[int, Any] = {}
        warm = cupy.cuda.Stream(non_blocking=True)
        with warm:
            self._result = self._enqueue()
        warm.synchronize()

    def record(self, stream: Stream, n: int) -> None:
        if stream.address not in self._streams:
            self._streams[stream.address] = _cupy_stream(stream.address, self._device_id)
        with self._streams[stream.address]:
            self._result = self._enqueue()

    def _enqueue(self) -> Any:
        """The scan on CuPy's current stream; returns the buffer that holds the result."""
        import cupy

        a, b = self._buffers
        a[:1].fill(0)                       # exclusive: shift the input right by one
        cupy.copyto(a[1:], self._x[:-1])
        d = 1
        while d < self._capacity:           # inclusive Hillis–Steele on the shifted input
            cupy.add(a[d:], a[:-d], out=b[d:])
            cupy.copyto(b[:d], a[:d])
            a, b = b, a
            d *= 2
        return a

    def outputs(self, n: int) -> dict[str, np.ndarray]:
        return {"prefix": self._result[:n].get()}

    def reference(self, n: int) -> dict[str, np.ndarray]:
        out = np.zeros(n, dtype=np.uint32)
        if n > 1:
            out[1:] = (np.cumsum(self._x_host[:n - 1], dtype=np.uint64)
                       & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        return {"prefix": out}

    def teardown(self) -> None:
        # Dropping the arrays returns them to CuPy's memory pool.
        self._x = self._result = None
        self._buffers = ()
        self._streams.clear()
