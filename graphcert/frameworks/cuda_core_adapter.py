"""The cuda.core adapter for framework steps. It imports cuda.core when built; cuda.bindings
only through graphcert.cuda (the device count, device buffers, the graph reader).

A cuda.core step is `fn(stream, *arrays) -> arrays it wrote`: `stream` is a cuda.core Stream
when run eagerly and a GraphBuilder while captured, so `launch(stream, ...)` works in both;
each array is a `DeviceArray` graphcert made from the numpy arrays `make_inputs(n)` returned
(outputs included: nothing may be allocated while capturing)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from graphcert.apicheck import as_tuple
from graphcert.cuda.device import device_count
from graphcert.cuda.memory import DeviceBuffer
from graphcert.errors import FrameworkMissing, NoDriverError, first_line
from graphcert.frameworks.adapters import check_device, graph_memory, native
from graphcert.frameworks.padding import Fill, padded_host

if TYPE_CHECKING:
    from graphcert.frameworks.adapters import Captured
    from graphcert.frameworks.step import Step
    from graphcert.model import GraphSnapshot


@dataclass
class DeviceArray:
    """Device memory with a numpy shape and dtype; `ptr` is what a kernel takes."""

    buffer: DeviceBuffer
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def ptr(self) -> int:
        return self.buffer.ptr

    @property
    def size(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    @classmethod
    def of(cls, host: np.ndarray) -> DeviceArray:
        data = np.ascontiguousarray(host)
        buf = DeviceBuffer(data.nbytes)
        buf.upload(data)
        return cls(buf, tuple(data.shape), data.dtype)

    def get(self) -> np.ndarray:
        return self.buffer.download(self.dtype, self.size).reshape(self.shape)


@dataclass
class CoreCaptured:
    builder: Any
    graph: Any
    stream: Any
    outputs: tuple[object, ...]
    capture_s: float
    instantiate_s: float | None
    pool_bytes: int | None = None
    keep: list[Any] = field(default_factory=list)

    def launch(self) -> None:
        self.graph.launch(self.stream)

    def release(self) -> None:
        self.graph.close()
        self.builder.close()
        for array in self.keep:
            array.buffer.free()
        self.keep.clear()


class CudaCoreAdapter:
    """cuda.core: a stream of its own on device number `device` (made current), GraphBuilder
    capture in global mode (so an allocation or synchronisation inside the step is refused,
    as it would be in production)."""

    framework = "cuda.core"

    def __init__(self, device: int = 0) -> None:
        try:
            from cuda.core import Device
        except ImportError as exc:
            raise FrameworkMissing(f"cuda.core is not installed ({exc})",
                                   hint="pip install cuda-core") from None
        try:
            count = device_count()
        except NoDriverError as exc:
            raise FrameworkMissing(f"cuda.core has no CUDA device to use: {exc.one_line()}",
                                   hint="run on a machine with a GPU") from None
        check_device("cuda.core", device, count)
        self.device_index = device
        self.dev = Device(device)
        self.dev.set_current()
        self.stream = self.dev.create_stream()

    def prepare(self) -> None:
        from graphcert.sources import prepare_reader

        prepare_reader()

    def head(self, array: object, n: int) -> object:
        return array  # no device views here: rows() takes the first n on the host

    def static_inputs(self, values: Sequence[object]) -> tuple[object, ...]:
        return tuple(DeviceArray.of(np.asarray(v)) for v in values)

    def pad_into(self, static: Sequence[object], values: Sequence[object], n: int,
                 fills: Sequence[Fill]) -> None:
        self.stream.sync()
        for dst, src, fill in zip(map(native, static), values, fills, strict=True):
            dst.buffer.upload(padded_host(dst.shape, dst.dtype, src, n, fill))

    def call(self, step: Step, values: Sequence[object]) -> None:
        step.fn(self.stream, *values)

    def eager(self, step: Step, values: Sequence[object]) -> tuple[object, ...]:
        arrays = [DeviceArray.of(np.asarray(v)) for v in values]
        try:
            outputs = as_tuple(step.fn(self.stream, *arrays))
            self.stream.sync()
            return tuple(self.to_numpy(o) for o in outputs)
        finally:
            for array in arrays:
                array.buffer.free()

    def capture(self, step: Step, static: Sequence[object]) -> CoreCaptured:
        for _ in range(step.warmup):  # loads the modules: nothing loads during capture
            step.fn(self.stream, *static)
        self.stream.sync()
        builder = self.stream.create_graph_builder()
        t0 = time.perf_counter()
        builder.begin_building("global")
        try:
            outputs = as_tuple(step.fn(builder, *static))
        except BaseException:
            try:
                builder.end_building()
            except Exception:  # noqa: BLE001 - the step's own error is the one to report
                pass
            builder.close()
            raise
        builder.end_building()
        t1 = time.perf_counter()
        graph = builder.complete()
        graph.upload(self.stream)
        self.stream.sync()
        t2 = time.perf_counter()
        return CoreCaptured(builder, graph, self.stream, outputs, t1 - t0, t2 - t1,
                            keep=list(static))

    def to_numpy(self, array: object) -> np.ndarray:
        return array.get() if isinstance(array, DeviceArray) else np.asarray(array)

    def snapshot(self, captured: Captured, name: str) -> GraphSnapshot:
        from graphcert.sources import snapshot_of

        return snapshot_of(native(captured).builder, name=name)

    def capture_error(self, exc: BaseException) -> str | None:
        text = str(exc)
        if not any(w in text for w in ("CAPTURE", "capturing", "not permitted")):
            return None
        return (f"cuda.core could not build it: {first_line(exc)}; the step allocates or "
                "synchronises while the GraphBuilder captures: take every array from make_inputs "
                "and launch on the stream you are given, with no sync() inside the step")

    def synchronize(self) -> None:
        self.stream.sync()

    def stream_address(self) -> int:
        return int(self.stream.handle)

    def graph_memory(self) -> dict[str, int]:
        return graph_memory(self.device_index)
