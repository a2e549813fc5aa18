"""What the PyTorch and CuPy adapters share (torch_adapter.py, cupy_adapter.py): the reader's
one-time set-up, device-side slicing, copies and comparison, reading a captured graph, the
driver's graph memory, and translating a capture error. Imports neither framework."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from graphcert.errors import first_line
from graphcert.frameworks.adapters import graph_memory, native

if TYPE_CHECKING:
    from graphcert.frameworks.adapters import Captured
    from graphcert.model import GraphSnapshot

# Errors frameworks raise when the captured work synchronises with the host or allocates.
_CAPTURE_WORDS = ("capturing", "capture", "not permitted", "cudaErrorStreamCapture",
                  "operation would make the legacy stream depend on a capturing")


class ArrayAdapter:
    """What the PyTorch and CuPy adapters share: the reader's one-time set-up, device-side
    slicing and copies, reading a captured graph, the driver's graph memory of the adapter's
    device, and translating a capture error (each says what its framework does wrong during
    capture in `_capture_advice`)."""

    _label = ""
    _capture_advice = ""
    device = 0

    def prepare(self) -> None:
        from graphcert.sources import prepare_reader

        prepare_reader()

    def clone(self, array: object) -> object:
        return native(array).copy()

    def nbytes(self, array: object) -> int:
        return int(native(array).nbytes)

    def graph_memory(self) -> dict[str, int]:
        return graph_memory(self.device)

    def head(self, array: object, n: int) -> object:
        a = native(array)
        return a if a.ndim == 0 else a[:n]

    _array: Any = None  # for the device comparisons: the framework's array type

    def _stack(self, flags: list[Any]) -> Any:
        raise NotImplementedError

    def _unlike(self, g: Any, w: Any) -> bool:
        raise NotImplementedError

    def _close(self, g: Any, w: Any, rtol: float, atol: float) -> Any:
        raise NotImplementedError

    def _verdict(self, got: Sequence[Any], want: Sequence[Any],
                 test: Callable[[Any, Any], Any]) -> bool | None:
        """test(g, w), a device bool, over all output pairs, read once; None: the host says."""
        if len(got) != len(want):
            return None
        flags = []
        for g, w in zip(got, want, strict=True):
            if not (isinstance(g, self._array) and isinstance(w, self._array)):
                return None
            if g.shape != w.shape or self._unlike(g, w):
                return None
            if math.prod(g.shape) == 0:
                continue
            flags.append(test(g, w))
        return bool(self._stack(flags).all().item()) if flags else True

    def all_close(self, got: Sequence[object], want: Sequence[object], rtol: float,
                  atol: float) -> bool | None:
        """numpy's verdict on the device (isclose with equal_nan for floats, upcast to
        float64; integers and bools equal), one host read for all outputs."""
        return self._verdict(got, want, lambda g, w: self._close(g, w, rtol, atol))

    def snapshot(self, captured: Captured, name: str) -> GraphSnapshot:
        from graphcert.sources import snapshot_of

        return snapshot_of(native(captured).graph, name=name)

    def capture_error(self, exc: BaseException) -> str | None:
        if not any(w in str(exc) for w in _CAPTURE_WORDS):
            return None
        return f"{self._label} could not capture it: {first_line(exc)}; {self._capture_advice}"
