"""Streams, events, and the blocking kernel that holds a stream while launches queue."""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
from cuda.bindings import driver

from graphcert.cuda.check import check
from graphcert.cuda.memory import DeviceBuffer, PinnedBuffer
from graphcert.cuda.owned import Borrowed, Owned
from graphcert.telemetry import COUNTERS

if TYPE_CHECKING:
    from collections.abc import Iterator

    from graphcert.cuda.module import Kernel


class Stream(Owned):
    """A non-blocking stream (never synchronises with the legacy default stream)."""

    def __init__(self) -> None:
        self.handle = check(driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING),
                            "cuStreamCreate")

    @staticmethod
    def borrow(address: int) -> StreamRef:
        """Wrap another library's stream (CuPy, nvbench) by address; destroy() leaves it."""
        return StreamRef(address)

    def synchronize(self) -> None:
        COUNTERS.sync()
        check(driver.cuStreamSynchronize(self.handle), "cuStreamSynchronize")

    def is_capturing(self) -> bool:
        status = check(driver.cuStreamIsCapturing(self.handle), "cuStreamIsCapturing")
        return bool(status == driver.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE)

    def capture_status(self) -> str:
        status = check(driver.cuStreamIsCapturing(self.handle), "cuStreamIsCapturing")
        return str(status.name).replace("CU_STREAM_CAPTURE_STATUS_", "").lower()

    def __cuda_stream__(self) -> tuple[int, int]:
        """The CUDA stream protocol (version 0, handle): CuPy and cuda.core take it directly."""
        return (0, int(self.handle))

    @property
    def address(self) -> int:
        """The CUstream as an integer, for libraries that take external streams (CuPy)."""
        return int(self.handle)

    def _free(self, handle: Any) -> None:
        check(driver.cuStreamDestroy(handle), "cuStreamDestroy")


class StreamRef(Borrowed, Stream):
    """A stream another library owns, by address: every Stream method, and destroy()
    leaves the stream as it is."""

    def __init__(self, address: int):  # no cuStreamCreate: the stream exists
        self.handle = driver.CUstream(int(address))


class Event(Owned):
    """A CUDA event; timing events by default."""

    def __init__(self, *, timing: bool = True):
        flags = (driver.CUevent_flags.CU_EVENT_DEFAULT if timing
                 else driver.CUevent_flags.CU_EVENT_DISABLE_TIMING)
        self.handle = check(driver.cuEventCreate(flags), "cuEventCreate")

    def record(self, stream: Stream) -> None:
        check(driver.cuEventRecord(self.handle, stream.handle), "cuEventRecord")

    def synchronize(self) -> None:
        COUNTERS.sync()
        check(driver.cuEventSynchronize(self.handle), "cuEventSynchronize")

    def elapsed_s(self, later: Event) -> float:
        """Seconds from this event to `later` (both recorded and complete)."""
        ms = check(driver.cuEventElapsedTime(self.handle, later.handle), "cuEventElapsedTime")
        return float(ms) / 1e3

    def _free(self, handle: Any) -> None:
        check(driver.cuEventDestroy(handle), "cuEventDestroy")


class BlockingKernel:
    """Holds a stream with a spinning kernel until released, or until its timeout.

    Launches enqueued behind it run back to back once it is released, so their events
    measure GPU time alone. The timeout means a full launch queue (the host blocks inside
    cuLaunchKernel) resolves itself: the kernel ends, the queue drains, and `timed_out`
    tells the caller the queued figure is unusable.
    """

    RELEASED, TIMED_OUT = 1, 2

    def __init__(self, kernel: Kernel, timeout_s: float = 5.0):
        self.kernel = kernel
        self.timeout_s = timeout_s
        self._flag = PinnedBuffer(4, mapped=True)
        self._status = DeviceBuffer(4)
        self._flag_view = self._flag.array(np.uint32, 1)

    def hold(self, stream: Stream) -> None:
        self._flag_view[0] = 0
        self._status.upload(np.zeros(1, dtype=np.uint32))
        assert self._flag.device_ptr is not None
        self.kernel.launch(stream, 1, 1, np.uint64(self._flag.device_ptr),
                           np.uint64(int(self.timeout_s * 1e9)), self._status)

    def release(self) -> None:
        self._flag_view[0] = 1

    def outcome(self) -> int:
        """RELEASED or TIMED_OUT, after the stream has been synchronised."""
        return int(self._status.download(np.uint32, 1)[0])

    @contextmanager
    def holding(self, stream: Stream) -> Iterator[BlockingKernel]:
        """Hold `stream` for the body (which enqueues), then release and synchronise."""
        self.hold(stream)
        try:
            yield self
        finally:
            self.release()
            stream.synchronize()

    def free(self) -> None:
        self._flag.free()
        self._status.free()

