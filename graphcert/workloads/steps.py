"""Framework steps: a user's PyTorch, CuPy or cuda.core callable, captured by its own framework
once per bucket and replayed with its inputs padded up to the bucket, as serving engines do.

A step is declared with `graphcert.step(fn, make_inputs, ...)`; `file.py:NAME` or
`module:NAME` naming one is loaded like any workload. The framework code is in adapters
(`adapter_for(framework)`), each imported only when a step of that framework runs: torch and
CuPy in graphcert.workloads.frameworks, cuda.core in graphcert.cuda.core_step (the only layer
that imports cuda.core). `register_adapter` adds one (the CPU tests add a synthetic one).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from graphcert.errors import FrameworkMissing, InputError

if TYPE_CHECKING:
    import numpy as np

    from graphcert.model import GraphSnapshot

FRAMEWORKS = ("torch", "cupy", "cuda.core")

Rows = Callable[["np.ndarray", int], "np.ndarray"]


def first_rows(output: np.ndarray, n: int) -> np.ndarray:
    """The default `rows`: the first n rows of an output along dim 0 (a 0-d output whole)."""
    return output if output.ndim == 0 else output[:n]


@dataclass(frozen=True)
class Step:
    """A framework step: `fn(*inputs)` (cuda.core: `fn(stream, *arrays)`) and `make_inputs(n)`,
    the inputs for batch size n (each batched along dim 0). Built by `graphcert.step`."""

    fn: Callable[..., Any]
    make_inputs: Callable[[int], Any]
    framework: str = "torch"
    rows: Rows = first_rows
    rtol: float = 1e-3
    atol: float = 1e-3
    name: str = "step"
    pad_value: float = 0.0
    warmup: int = 3
    description: str = "framework step"
    kernel_files: tuple[str, ...] = field(default=())


def step(fn: Callable[..., Any], make_inputs: Callable[[int], Any], *,
         framework: str = "torch", rows: Rows | None = None, rtol: float = 1e-3,
         atol: float = 1e-3, name: str | None = None, pad_value: float = 0.0,
         warmup: int = 3, description: str | None = None) -> Step:
    """Declare a step graphcert captures per bucket with the framework's own capture.

    `fn(*inputs)` runs the step (cuda.core: `fn(stream, *arrays)`, launching on `stream`, a
    cuda.core Stream or GraphBuilder, and returning the arrays it wrote). `make_inputs(n)` returns
    the inputs for batch size n (a tuple, or one array), each batched along dim 0; weights
    belong in fn's closure. `rows(output, n)` picks the part of an output (as numpy) that
    belongs to n (default: its first n rows). Padded rows hold `pad_value`. The replayed graph
    must match the eager call at n within `rtol`/`atol`. `warmup` eager calls at the bucket's
    size precede each capture (on a side stream, as PyTorch requires)."""
    if framework not in FRAMEWORKS and framework not in _ADAPTERS:
        raise InputError(f"step framework {framework!r} is not one graphcert captures",
                         hint=f"use one of {', '.join(FRAMEWORKS)}")
    if not callable(fn) or not callable(make_inputs):
        raise InputError("graphcert.step takes the step's callable and a make_inputs(n) "
                         "callable", hint="graphcert.step(fn, make_inputs, framework=...)")
    if not all(math.isfinite(t) and t >= 0 for t in (rtol, atol)) or warmup < 0:
        raise InputError(f"rtol and atol must be finite numbers >= 0 and warmup >= 0 (got "
                         f"rtol={rtol!r}, atol={atol!r}, warmup={warmup!r})")
    label = name or getattr(fn, "__name__", None) or "step"
    return Step(fn, make_inputs, framework, rows or first_rows, float(rtol), float(atol),
                str(label), float(pad_value), int(warmup),
                description or f"{framework} step {label}, captured per bucket and padded")


def is_step(obj: Any) -> bool:
    """True for a declared framework step."""
    return isinstance(obj, Step)


class Captured(Protocol):
    """One bucket's graph as the framework captured it, with its static outputs."""

    outputs: tuple[Any, ...]
    capture_s: float
    instantiate_s: float | None
    pool_bytes: int | None  # the framework's memory pool behind the graph, where it says

    def launch(self) -> None:
        """Launch the graph on the framework's stream (the adapter's synchronize waits)."""

    def release(self) -> None:
        """Free the graph and its static buffers."""


class Adapter(Protocol):
    """What graphcert needs from a framework to capture, pad, replay and compare a step."""

    framework: str

    def prepare(self) -> None:
        """graphcert's one-time set-up before the first bucket (its graph reader's imports
        and driver bindings, the first memory read's one-time cost), so per-bucket figures
        hold only per-bucket work."""

    def static_inputs(self, values: Sequence[Any]) -> tuple[Any, ...]:
        """Buffers the graph reads, filled with the bucket-sized inputs."""

    def pad_into(self, static: Sequence[Any], values: Sequence[Any], n: int,
                 pad_value: float) -> None:
        """Copy the n-row inputs into the first n rows of `static`, the rest `pad_value`."""

    def call(self, step: Step, values: Sequence[Any]) -> None:
        """Call the step eagerly without waiting (static inputs: what bench times)."""

    def eager(self, step: Step, values: Sequence[Any]) -> tuple[Any, ...]:
        """Run the step at its own size (not captured) and wait for it: the reference."""

    def capture(self, step: Step, static: Sequence[Any]) -> Captured:
        """Warm up, then capture the step over `static` with the framework's capture."""

    def to_numpy(self, array: Any) -> np.ndarray:
        """An output as a host numpy array (waits for it)."""

    def head(self, array: Any, n: int) -> Any:
        """The first n rows of an output, still on the device (a view: nothing copied), so
        only they are copied to the host; the whole output where the framework has no views."""

    def snapshot(self, captured: Captured, name: str) -> GraphSnapshot:
        """The captured graph read by graphcert (graphcert.snapshot for real frameworks)."""

    def capture_error(self, exc: BaseException) -> str | None:
        """The fix for a framework error raised while capturing, or None if not one of those."""

    def synchronize(self) -> None:
        """Wait for all the framework's work on the device."""

    def graph_memory(self) -> dict[str, int]:
        """The driver's graph memory attributes for the adapter's device ({} where not
        readable)."""


class DeviceCompare(Protocol):
    """Optional adapter methods (PyTorch, CuPy) that compare on the device, so a sample that
    matches copies nothing to the host. Used only with the default `rows` (first_rows)."""

    def clone(self, array: Any) -> Any:
        """A device copy of an array (the eager rows, before a replay may overwrite them)."""

    def nbytes(self, array: Any) -> int:
        """The array's size in bytes (small rows are compared on the host: cheaper)."""

    def all_close(self, got: Sequence[Any], want: Sequence[Any], rtol: float,
                  atol: float) -> bool | None:
        """True when every output is close (numpy's isclose, equal_nan) or equal (integers),
        with one host read; None when the device cannot say (complex, other shapes)."""


def device_compare(adapter: Adapter) -> DeviceCompare | None:
    """The adapter's device comparison, or None where it has none (the host path runs)."""
    if all(callable(getattr(adapter, m, None)) for m in ("all_close", "clone", "nbytes")):
        return adapter  # type: ignore[return-value]
    return None


# A factory takes the device index (--device) the adapter's framework works on.
AdapterFactory = Callable[[int], Adapter]
_ADAPTERS: dict[str, AdapterFactory] = {}


def register_adapter(framework: str, factory: AdapterFactory) -> None:
    """Make `framework` available to steps (the built-in ones are registered lazily);
    `factory(device)` builds its adapter for a device index."""
    _ADAPTERS[framework] = factory


def adapter_for(framework: str, device: int = 0) -> Adapter:
    """The adapter for a framework on device number `device`; FrameworkMissing (a reason)
    when it is not installed."""
    if framework in _ADAPTERS:
        return _ADAPTERS[framework](device)
    if framework == "torch":
        from graphcert.workloads.frameworks import TorchAdapter

        return TorchAdapter(device)
    if framework == "cupy":
        from graphcert.workloads.cupy_adapter import CupyAdapter

        return CupyAdapter(device)
    if framework == "cuda.core":
        from graphcert.cuda.core_step import CudaCoreAdapter

        return CudaCoreAdapter(device)
    raise InputError(f"no adapter for step framework {framework!r}",
                     hint=f"use one of {', '.join(FRAMEWORKS)}")


__all__ = ["FRAMEWORKS", "Adapter", "AdapterFactory", "Captured", "DeviceCompare",
           "FrameworkMissing", "Step", "adapter_for", "device_compare", "first_rows",
           "is_step", "register_adapter", "step"]
