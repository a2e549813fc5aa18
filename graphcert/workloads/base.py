"""The Workload protocol. Pure: a workload module imports graphcert.cuda only where it runs.

A workload is sized by capacity class: `setup(ctx, capacity)` allocates everything for the
class and fills inputs from `ctx.seed`; `record(stream, n)` enqueues the whole kernel
sequence for size n <= capacity with launch geometry sized by `capacity` (n travels as a
kernel parameter), so every n of one class yields the same graph topology and shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from graphcert.cuda.context import RunContext
    from graphcert.cuda.stream import Stream


@dataclass(frozen=True)
class SizeParam:
    """A kernel parameter that carries the true n: which kernel, which parameter index.

    verify uses it to update an exec's kernel nodes in place (no re-capture).
    `value(n)` computes that parameter for size n (default: n itself).
    """

    kernel: str
    index: int
    scale: int = 1  # the parameter equals n * scale

    def value(self, n: int) -> int:
        return n * self.scale


@dataclass(frozen=True)
class Tolerance:
    """How outputs compare with the numpy reference: exact, or float within rtol/atol."""

    rtol: float = 0.0
    atol: float = 0.0
    unordered: tuple[str, ...] = field(default_factory=tuple)  # outputs compared as multisets


@runtime_checkable
class Workload(Protocol):
    """What every workload implements. See the module docstring for the sizing rule."""

    name: str
    description: str
    kernel_files: tuple[str, ...]  # file names under kernels/

    def setup(self, ctx: RunContext, capacity: int) -> None:
        """Allocate for the capacity class and fill inputs deterministically from ctx.seed."""

    def record(self, stream: Stream, n: int) -> None:
        """Enqueue the whole kernel sequence for size n on `stream` (capturable)."""

    def outputs(self, n: int) -> dict[str, np.ndarray]:
        """Read back the outputs for size n (the stream has been synchronised)."""

    def reference(self, n: int) -> dict[str, np.ndarray]:
        """The numpy reference outputs for size n, from the same seeded inputs."""

    def teardown(self) -> None:
        """Free everything setup allocated."""


def predict(workload: Any, capacity: int) -> dict[str, int] | None:
    """The workload's own node-count prediction by kind, or None if it makes none."""
    fn = getattr(workload, "predict", None)
    return fn(capacity) if callable(fn) else None


def size_params(workload: Any) -> tuple[SizeParam, ...]:
    """Kernel parameters that carry n, if the workload names them."""
    return tuple(getattr(workload, "size_params", ()) or ())


def tolerance(workload: Any) -> Tolerance:
    return getattr(workload, "tolerance", None) or Tolerance()


def builds_explicitly(workload: Any) -> bool:
    """True for a workload that builds its graph node by node (`build(builder, n)`)."""
    return callable(getattr(workload, "build", None))


def memory_estimate(workload: Any, capacity: int) -> int | None:
    """Bytes of device memory setup(capacity) will take, if the workload says."""
    fn = getattr(workload, "bytes_needed", None)
    return int(fn(capacity)) if callable(fn) else None


__all__ = [
    "SizeParam",
    "Tolerance",
    "Workload",
    "builds_explicitly",
    "memory_estimate",
    "predict",
    "size_params",
    "tolerance",
]

