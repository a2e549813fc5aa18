"""What `registry.load` returns: one typed value for a built-in, a user workload or a framework
step, normalised once at load, which run/ takes. Pure: imports no CUDA.

A workload graphcert records itself (a built-in or a user's `Workload`) is a `NativeWorkload`:
the object and its optional hooks, resolved once here (its own, else WorkloadBase's default),
so run/ calls `hooks.predict(capacity)` instead of looking hooks up by name. A framework step
(`graphcert.step(...)`) is the `Step` itself: its framework captures it (run/steps.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from graphcert.errors import InputError
from graphcert.frameworks.step import Step
from graphcert.workloads.base import SizeParam, Tolerance, Workload, WorkloadBase

if TYPE_CHECKING:
    from graphcert.cuda.builder import GraphBuilder

_DEFAULTS = WorkloadBase()


def _own(workload: object, name: str) -> object:
    """The workload's hook `name`, or WorkloadBase's default for it (None means the default:
    subclasses and duck-typed workloads alike)."""
    own = getattr(workload, name, None)
    return own if own is not None else getattr(_DEFAULTS, name)


@dataclass(frozen=True)
class Hooks:
    """A workload's optional hooks (WorkloadBase declares them with their defaults), resolved
    once at load by `hooks_of`."""

    predict: Callable[[int], dict[str, int] | None]  # node counts by kind (None: no prediction)
    bytes_needed: Callable[[int], int | None]  # device memory setup(capacity) takes
    build: Callable[[GraphBuilder, int], None] | None  # None: record() is captured
    # Read when asked, not at load: a property may depend on the class set up (the size
    # parameters of scan and join do).
    size_params: Callable[[], tuple[SizeParam, ...]]
    tolerance: Callable[[], Tolerance]

    @property
    def builds_explicitly(self) -> bool:
        """True for a workload that builds its graph node by node (`build(builder, n)`)."""
        return self.build is not None


def hooks_of(workload: object) -> Hooks:
    """The workload's optional hooks: its own where it defines them, else the defaults."""
    # The casts state what WorkloadBase declares each hook to be (a user's own may differ:
    # then it fails where it is called, as a user's code does, and run/ reports it).
    predict = cast(Callable[[int], Mapping[str, int] | None], _own(workload, "predict"))
    bytes_needed = cast(Callable[[int], int | None], _own(workload, "bytes_needed"))
    build = cast("Callable[[GraphBuilder, int], None] | None", _own(workload, "build"))

    def counts(capacity: int) -> dict[str, int] | None:
        got = predict(capacity)
        return dict(got) if got is not None else None

    def memory(capacity: int) -> int | None:
        need = bytes_needed(capacity)
        return int(need) if need is not None else None

    def size_params() -> tuple[SizeParam, ...]:
        return tuple(cast(Iterable[SizeParam], _own(workload, "size_params")))

    def tolerance() -> Tolerance:
        return cast(Tolerance, _own(workload, "tolerance"))

    return Hooks(counts, memory, build, size_params, tolerance)


@dataclass(frozen=True)
class NativeWorkload:
    """A workload graphcert records itself (a built-in or a user's), with its hooks."""

    workload: Workload
    hooks: Hooks

    @classmethod
    def of(cls, workload: Workload) -> NativeWorkload:
        return cls(workload, hooks_of(workload))

    @property
    def name(self) -> str:
        return str(self.workload.name)


@dataclass(frozen=True)
class LoadedWorkload:
    """A loaded reference: the text it was loaded from, where its object came from (a module
    or a file), and what runs: a NativeWorkload or a framework Step."""

    ref: str
    origin: str
    target: NativeWorkload | Step

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def is_step(self) -> bool:
        return isinstance(self.target, Step)

    def native(self) -> NativeWorkload:
        """The workload graphcert records itself; InputError for a framework step (its
        framework captures it: run/steps.py)."""
        if isinstance(self.target, Step):
            raise InputError(f"{self.ref} is a framework step, which its framework captures",
                             hint="run it with graphcert verify, bench or capture")
        return self.target

    def step(self) -> Step:
        """The framework step; InputError for a workload graphcert records itself."""
        if not isinstance(self.target, Step):
            raise InputError(f"{self.ref} is a workload, not a framework step",
                             hint="declare a step with graphcert.step(fn, make_inputs, ...)")
        return self.target


__all__ = ["Hooks", "LoadedWorkload", "NativeWorkload", "hooks_of"]
