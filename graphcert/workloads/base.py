"""The Workload protocol. Pure: a workload module imports graphcert.cuda only where it runs.

A workload is sized by capacity class: `setup(ctx, capacity)` allocates everything for the
class and fills inputs from `ctx.seed`; `record(stream, n)` enqueues the whole kernel
sequence for size n <= capacity with launch geometry sized by `capacity` (n travels as a
kernel parameter), so every n of one class yields the same graph topology and shape.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from graphcert.cuda.builder import GraphBuilder
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
        """Read back the outputs for size n (the stream has been synchronised). The arrays
        may be reused by the next call (graphcert compares them at once); copy to keep."""

    def reference(self, n: int) -> dict[str, np.ndarray]:
        """The numpy reference outputs for size n, from the same seeded inputs."""

    def teardown(self) -> None:
        """Free everything setup allocated."""

    # Optional hooks (predict, size_params, tolerance, build, bytes_needed): see WorkloadBase.


class WorkloadBase:
    """The optional hooks and their defaults. Built-ins subclass it; a user workload may, or
    may define any of these itself: `graphcert.workloads.loaded.hooks_of` gives the workload's
    own or these defaults."""

    @property
    def size_params(self) -> tuple[SizeParam, ...]:
        """Kernel parameters that carry n, so verify can update a graph in place (none:
        every size is re-captured). A class attribute or a property."""
        return ()

    #: how outputs compare with the numpy reference (default: exact)
    tolerance: Tolerance = Tolerance()
    #: `build(builder, n)` builds the graph node by node instead of capturing record()
    build: Callable[[GraphBuilder, int], None] | None = None

    def predict(self, capacity: int) -> dict[str, int] | None:
        """Node counts by kind the graph of this class should have (None: no prediction)."""
        return None

    def bytes_needed(self, capacity: int) -> int | None:
        """Device memory setup(capacity) takes (None: unknown, never refused)."""
        return None


# The optional hooks by name; graphcert.workloads.loaded.hooks_of resolves them once at load.
OPTIONAL_HOOKS = ("predict", "size_params", "tolerance", "build", "bytes_needed")

__all__ = ["OPTIONAL_HOOKS", "SizeParam", "Tolerance", "Workload", "WorkloadBase"]
