"""The CuPy adapter for framework steps: stream capture on a non-blocking stream;
`end_capture()` also instantiates. Imports CuPy when built, so importing this module does
not."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcert.apicheck import as_tuple
from graphcert.errors import FrameworkMissing
from graphcert.frameworks.adapters import check_device, native
from graphcert.frameworks.array_adapter import ArrayAdapter
from graphcert.frameworks.padding import Fill, fill_rows
from graphcert.frameworks.step import Step


@dataclass
class CupyCaptured:
    graph: Any
    stream: Any
    outputs: tuple[object, ...]
    capture_s: float
    instantiate_s: float | None
    pool_bytes: int | None
    keep: list[Any] = field(default_factory=list)

    def launch(self) -> None:
        # on the current stream, where the eager call runs: bench times both on one stream
        self.graph.launch()

    def release(self) -> None:
        self.keep.clear()
        self.graph = None


class CupyAdapter(ArrayAdapter):
    """CuPy: arrays on device `device` (made the current one); capture on a non-blocking
    stream."""

    _label = "CuPy"
    _capture_advice = ("the step allocates or synchronises during capture: make every output "
                       "and temporary before capturing and write into it with out= "
                       "(cp.add(x, y, out=z)), and keep host reads (.get(), float(), "
                       "cp.asnumpy) out of the step")

    framework = "cupy"

    def __init__(self, device: int = 0) -> None:
        try:
            import cupy
        except ImportError as exc:
            raise FrameworkMissing(f"CuPy is not installed ({exc})",
                                   hint="pip install cupy-cuda13x") from None
        try:
            count = cupy.cuda.runtime.getDeviceCount()
            if count < 1:
                raise FrameworkMissing("CuPy sees no CUDA device")
        except cupy.cuda.runtime.CUDARuntimeError as exc:
            raise FrameworkMissing(f"CuPy cannot reach a CUDA device: {exc}") from None
        check_device("CuPy", device, count)
        cupy.cuda.Device(device).use()
        self.device = device
        self.cp = cupy
        self._array = cupy.ndarray

    def _close(self, g: Any, w: Any, rtol: float, atol: float) -> Any:
        """Floats upcast to float64 and numpy's isclose as numpy writes it, one operation
        per kernel (cupy.isclose is one kernel, where the compiler may fuse a multiply-add
        and round apart)."""
        cp = self.cp
        if "f" not in (g.dtype.kind, w.dtype.kind):
            return (g == w).all()
        x, y = g.astype(cp.float64), w.astype(cp.float64)
        close = (cp.abs(x - y) <= atol + rtol * cp.abs(y)) & cp.isfinite(y)
        close |= x == y
        close |= cp.isnan(x) & cp.isnan(y)
        return close.all()

    def _unlike(self, g: Any, w: Any) -> bool:
        return "c" in (g.dtype.kind, w.dtype.kind)

    def _stack(self, flags: list[Any]) -> Any:
        return self.cp.stack(flags)

    def static_inputs(self, values: Sequence[object]) -> tuple[object, ...]:
        return tuple(native(v).copy() for v in values)

    def pad_into(self, static: Sequence[object], values: Sequence[object], n: int,
                 fills: Sequence[Fill]) -> None:
        for dst, src, fill in zip(map(native, static), values, fills, strict=True):
            dst[:n] = src
            fill_rows(dst, n, fill, self.cp.arange)
        self.cp.cuda.Device().synchronize()

    def call(self, step: Step, values: Sequence[object]) -> None:
        step.fn(*values)

    def eager(self, step: Step, values: Sequence[object]) -> tuple[object, ...]:
        out = as_tuple(step.fn(*values))
        self.cp.cuda.Device().synchronize()
        return out

    def capture(self, step: Step, static: Sequence[object]) -> CupyCaptured:
        cp = self.cp
        stream = cp.cuda.Stream(non_blocking=True)
        pool = cp.get_default_memory_pool()
        used = pool.total_bytes()
        with stream:
            for _ in range(step.warmup):  # loads the kernels: nothing compiles in capture
                step.fn(*static)
            stream.synchronize()
            t0 = time.perf_counter()
            stream.begin_capture()
            try:
                outputs = as_tuple(step.fn(*static))
            except BaseException:
                try:
                    stream.end_capture()
                except Exception:  # noqa: BLE001 - the step's own error is the one to report
                    pass
                raise
            t1 = time.perf_counter()
            graph = stream.end_capture()  # ends the capture and instantiates
            t2 = time.perf_counter()
        return CupyCaptured(graph, stream, outputs, t1 - t0, t2 - t1,
                            max(pool.total_bytes() - used, 0), list(static))

    def to_numpy(self, array: object) -> np.ndarray:
        return np.asarray(self.cp.asnumpy(array))

    def synchronize(self) -> None:
        self.cp.cuda.Device().synchronize()

    def stream_address(self) -> int:
        # eager calls and graph launches both run on the current stream (CupyCaptured)
        return int(self.cp.cuda.get_current_stream().ptr)
