"""Device and pinned host buffers with numpy upload and download. Freed deterministically."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt
from cuda.bindings import driver

from graphcert.cuda.check import check
from graphcert.cuda.oplog import run
from graphcert.cuda.owned import Owned
from graphcert.telemetry import COUNTERS

if TYPE_CHECKING:  # stream.py imports this module
    from graphcert.cuda.stream import Stream


class DeviceBuffer(Owned):
    """cuMemAlloc'd device memory. `ptr` is the device address as an int; `handle` the
    CUdeviceptr, None once freed."""

    def __init__(self, nbytes: int):
        self.nbytes = int(nbytes)
        # cuMemAlloc(0) is an error; a zero-sized class still needs a valid pointer.
        self.handle = check(driver.cuMemAlloc(max(self.nbytes, 1)), "cuMemAlloc",
                            hint=f"needed {self.nbytes:,} bytes of device memory")
        self.ptr = int(self.handle)

    def upload(self, array: np.ndarray) -> None:
        """Synchronous host→device copy of a contiguous array."""
        data = np.ascontiguousarray(array)
        if data.nbytes > self.nbytes:
            raise ValueError(f"upload of {data.nbytes} bytes into a {self.nbytes}-byte buffer")
        if data.nbytes:
            COUNTERS.htod(data.nbytes)
            check(driver.cuMemcpyHtoD(self.handle, data.ctypes.data, data.nbytes),
                  "cuMemcpyHtoD")

    def download(self, dtype: npt.DTypeLike, count: int | None = None, offset: int = 0, *,
                 into: np.ndarray | None = None) -> np.ndarray:
        """Synchronous device→host copy of `count` elements (default: the whole buffer),
        into a new array or into the first `count` elements of `into` (a contiguous host
        array the caller reuses: large downloads then skip fresh pages' faults)."""
        dt = np.dtype(dtype)
        if count is None:
            count = (self.nbytes - offset) // dt.itemsize
        if into is None:
            out = np.empty(count, dtype=dt)
        else:
            if into.dtype != dt or into.size < count or not into.flags.c_contiguous:
                raise ValueError("download into an array of another dtype, too small, or "
                                 "not contiguous")
            out = into.reshape(-1)[:count]
        if out.nbytes:
            if offset + out.nbytes > self.nbytes:
                raise ValueError("download past the end of the buffer")
            COUNTERS.dtoh(out.nbytes)
            check(driver.cuMemcpyDtoH(out.ctypes.data, self.ptr + offset, out.nbytes),
                  "cuMemcpyDtoH")
        return out

    def memset_u32_async(self, value: int, count: int, stream: Stream) -> None:
        """Enqueue a 32-bit memset (captured as a memset node)."""
        ptr = self.ptr

        def op(s: Stream) -> None:
            check(driver.cuMemsetD32Async(ptr, value, count, s.handle), "cuMemsetD32Async")

        run(op, stream)

    def copy_from_host_async(self, host: PinnedBuffer, nbytes: int, stream: Stream) -> None:
        """Enqueue host→device from pinned memory (captured as a memcpy node)."""
        dst, src = self.ptr, host.ptr

        def op(s: Stream) -> None:
            COUNTERS.htod(nbytes)  # per enqueue: a replayed or captured op counts each time
            check(driver.cuMemcpyHtoDAsync(dst, src, nbytes, s.handle), "cuMemcpyHtoDAsync")

        run(op, stream)

    def copy_to_host_async(self, host: PinnedBuffer, nbytes: int, stream: Stream) -> None:
        """Enqueue device→host into pinned memory (captured as a memcpy node)."""
        dst, src = host.ptr, self.ptr

        def op(s: Stream) -> None:
            COUNTERS.dtoh(nbytes)
            check(driver.cuMemcpyDtoHAsync(dst, src, nbytes, s.handle), "cuMemcpyDtoHAsync")

        run(op, stream)

    def _free(self, handle: Any) -> None:
        check(driver.cuMemFree(handle), "cuMemFree")

    free = Owned.destroy  # memory is freed: the name its callers use


class PinnedBuffer(Owned):
    """Page-locked host memory, optionally mapped into the device's address space. `ptr`
    is the host address as an int; `handle` the same, None once freed."""

    def __init__(self, nbytes: int, *, mapped: bool = False):
        self.nbytes = int(nbytes)
        flags = driver.CU_MEMHOSTALLOC_DEVICEMAP if mapped else 0
        self.ptr = int(check(driver.cuMemHostAlloc(max(self.nbytes, 1), flags), "cuMemHostAlloc"))
        self.device_ptr = (int(check(driver.cuMemHostGetDevicePointer(self.ptr, 0),
                                     "cuMemHostGetDevicePointer")) if mapped else None)
        self.handle: int | None = self.ptr

    def array(self, dtype: npt.DTypeLike, count: int | None = None) -> np.ndarray:
        """A numpy view of the pinned memory (valid until free())."""
        dt: np.dtype[Any] = np.dtype(dtype)
        count = self.nbytes // dt.itemsize if count is None else count
        raw = (ctypes.c_byte * (count * dt.itemsize)).from_address(self.ptr)
        # A ctypes array is a buffer; numpy's stubs do not list it among frombuffer's.
        view: np.ndarray = np.frombuffer(cast("memoryview[int]", raw), dtype=dt, count=count)
        return view

    def _free(self, handle: Any) -> None:
        check(driver.cuMemFreeHost(handle), "cuMemFreeHost")

    free = Owned.destroy  # memory is freed: the name its callers use
