"""The framework adapters: what graphcert needs from a framework to capture, pad, replay and
compare a step (`Adapter`), the registry that builds one per framework (`adapter_for`), and
what every adapter shares (the --device check, the driver's graph memory).

Each built-in adapter imports its framework only when built: torch in torch_adapter, CuPy in
cupy_adapter, cuda.core in cuda_core_adapter (all in graphcert.frameworks).
`register_adapter` adds one (the CPU tests add a synthetic one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from graphcert.errors import InputError

if TYPE_CHECKING:
    import numpy as np

    from graphcert.frameworks.padding import Fill
    from graphcert.frameworks.step import Step
    from graphcert.model import GraphSnapshot

# The frameworks graphcert has an adapter for, built when a step of that framework runs.
FRAMEWORKS = ("torch", "cupy", "cuda.core")


class Captured(Protocol):
    """One bucket's graph as the framework captured it, with its static outputs."""

    outputs: tuple[object, ...]
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

    def static_inputs(self, values: Sequence[object]) -> tuple[object, ...]:
        """Buffers the graph reads, filled with the bucket-sized inputs."""

    def pad_into(self, static: Sequence[object], values: Sequence[object], n: int,
                 fills: Sequence[Fill]) -> None:
        """Copy the n-row inputs into the first n rows of `static`; the rest of input i
        holds fills[i] (None: the n real rows repeated; graphcert.frameworks.padding)."""

    def call(self, step: Step, values: Sequence[object]) -> None:
        """Call the step eagerly without waiting (static inputs: what bench times)."""

    def eager(self, step: Step, values: Sequence[object]) -> tuple[object, ...]:
        """Run the step at its own size (not captured) and wait for it: the reference."""

    def capture(self, step: Step, static: Sequence[object]) -> Captured:
        """Warm up, then capture the step over `static` with the framework's capture."""

    def to_numpy(self, array: object) -> np.ndarray:
        """An output as a host numpy array (waits for it)."""

    def head(self, array: object, n: int) -> object:
        """The first n rows of an output, still on the device (a view: nothing copied), so
        only they are copied to the host; the whole output where the framework has no views."""

    def snapshot(self, captured: Captured, name: str) -> GraphSnapshot:
        """The captured graph read by graphcert (graphcert.snapshot for real frameworks)."""

    def capture_error(self, exc: BaseException) -> str | None:
        """The fix for a framework error raised while capturing, or None if not one of those."""

    def synchronize(self) -> None:
        """Wait for all the framework's work on the device."""

    def stream_address(self) -> int:
        """The stream the eager call and a captured graph's launch run on (its CUstream
        address; 0 is the legacy default stream): bench times both there."""

    def graph_memory(self) -> dict[str, int]:
        """The driver's graph memory attributes for the adapter's device ({} where not
        readable)."""


class DeviceCompare(Protocol):
    """Optional adapter methods (PyTorch, CuPy) that compare on the device, so a sample that
    matches copies nothing to the host. Used only with the default `rows` (first_rows)."""

    def clone(self, array: object) -> object:
        """A device copy of an array (the eager rows, before a replay may overwrite them)."""

    def nbytes(self, array: object) -> int:
        """The array's size in bytes (small rows are compared on the host: cheaper)."""

    def all_close(self, got: Sequence[object], want: Sequence[object], rtol: float,
                  atol: float) -> bool | None:
        """True when every output is close (numpy's isclose, equal_nan) or equal (integers),
        with one host read; None when the device cannot say (complex, other shapes)."""


def device_compare(adapter: Adapter) -> DeviceCompare | None:
    """The adapter's device comparison, or None where it has none (the host path runs)."""
    if all(callable(getattr(adapter, m, None)) for m in ("all_close", "clone", "nbytes")):
        return adapter  # type: ignore[return-value]
    return None


def native(value: object) -> Any:
    """A step's array (or an adapter's own Captured) as the framework's object it is: the
    adapter of that framework alone reads it, with the framework's API, which mypy cannot
    check (no framework is a dependency or typed here). The value itself, unchanged."""
    return value


# A factory takes the device index (--device) the adapter's framework works on.
AdapterFactory = Callable[[int], Adapter]
_ADAPTERS: dict[str, AdapterFactory] = {}


def register_adapter(framework: str, factory: AdapterFactory) -> None:
    """Make `framework` available to steps (the built-in ones are registered lazily);
    `factory(device)` builds its adapter for a device index."""
    _ADAPTERS[framework] = factory


def registered() -> tuple[str, ...]:
    """The frameworks added with register_adapter."""
    return tuple(_ADAPTERS)


def adapter_for(framework: str, device: int = 0) -> Adapter:
    """The adapter for a framework on device number `device`; FrameworkMissing (a reason)
    when it is not installed."""
    if framework in _ADAPTERS:
        return _ADAPTERS[framework](device)
    if framework == "torch":
        from graphcert.frameworks.torch_adapter import TorchAdapter

        return TorchAdapter(device)
    if framework == "cupy":
        from graphcert.frameworks.cupy_adapter import CupyAdapter

        return CupyAdapter(device)
    if framework == "cuda.core":
        from graphcert.frameworks.cuda_core_adapter import CudaCoreAdapter

        return CudaCoreAdapter(device)
    raise InputError(f"no adapter for step framework {framework!r}",
                     hint=f"use one of {', '.join(FRAMEWORKS)}")


def check_device(label: str, device: int, count: int) -> None:
    """--device must name a GPU the framework sees."""
    if not 0 <= device < count:
        raise InputError(f"--device {device} is not a GPU {label} sees ({count} visible)",
                         hint=f"use --device 0..{count - 1}" if count else
                         "run on a machine with a GPU")


def graph_memory(device: int) -> dict[str, int]:
    """The driver's graph memory attributes ({} where the driver cannot say)."""
    try:
        from graphcert.cuda.handles import graph_memory_of

        return graph_memory_of(device)
    except Exception:  # noqa: BLE001 - informational: a figure, never a failure
        return {}


__all__ = ["FRAMEWORKS", "Adapter", "AdapterFactory", "Captured", "DeviceCompare",
           "adapter_for", "check_device", "device_compare", "graph_memory", "native",
           "register_adapter", "registered"]
