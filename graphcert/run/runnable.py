"""What run/ runs: one protocol over a workload graphcert records itself and a framework step.

`runnable(loaded)` makes the one `Runnable` of a loaded reference: `run/native.py`'s for a
built-in or user workload (graphcert's own RunContext, its own capture), `run/framework.py`'s
for a framework step (its framework's context and capture). run/jobs.py, capture, profile and
plan call its operations and never ask which of the two they hold. An operation one of them
cannot do is a `Refused` with its reason, raised by that side, not a branch at the call site.
Runs on a GPU (each operation does; making one does not).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from graphcert.errors import InputError

if TYPE_CHECKING:
    from graphcert.cert.results.capture import CaptureResult
    from graphcert.cuda.context import RunContext
    from graphcert.frameworks.step import Step
    from graphcert.kinds.bench.result import BenchResult
    from graphcert.kinds.profile.result import ProfiledClass
    from graphcert.kinds.topology.result import AnyClass, VerifyResult
    from graphcert.run.harness import BenchSettings
    from graphcert.run.profile_trace import ProfileSettings
    from graphcert.workloads.loaded import LoadedWorkload

Progress = Callable[..., None]  # on_progress(units, description=...), as the commands pass it


class Refused(InputError):
    """An operation this kind of subject cannot do: which one, and why, on one line (exit 2,
    as every bad input)."""

    def __init__(self, operation: str, message: str, *, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.operation = operation


class Runnable(Protocol):
    """A loaded workload or framework step as run/ drives it. `ctx` is graphcert's own
    RunContext, open where `needs_context` says one is needed (session.context_for), else
    None; `device` is the device number either runs on."""

    @property
    def loaded(self) -> LoadedWorkload:
        """The loaded reference, as certificates name it (environment.write)."""
        ...

    @property
    def ref(self) -> str:
        """The reference it was loaded from (`chain[kernels=10]`, `path/file.py:STEP`)."""
        ...

    @property
    def name(self) -> str:
        """Its name, as capture's output files carry it."""
        ...

    @property
    def needs_context(self) -> bool:
        """True where it runs in graphcert's own RunContext (a step runs in its framework's)."""
        ...

    def unbucketed(self, n: int) -> int:
        """The capacity size `n` is captured at when no bucket list is given (inventory,
        profile): a workload's class, a step's n itself."""
        ...

    def profile_sizes(self) -> Sequence[int]:
        """What it is profiled at when no size is given."""
        ...

    def verify(self, ctx: RunContext | None, capacities: Sequence[int], *, samples: int,
               seed: int, mode: str, classes_spec: str | None, device: int,
               on_class: Callable[[AnyClass], None] | None,
               on_progress: Progress | None) -> VerifyResult:
        """Verify it over `capacities` (classes or buckets): the typed result."""
        ...

    def bench(self, ctx: RunContext | None, sizes: Sequence[int], settings: BenchSettings, *,
              device: int, on_progress: Progress | None) -> BenchResult:
        """Bench it at `sizes` as `settings` say (their context: settled, fresh or both)."""
        ...

    def capture(self, sizes: Sequence[int], capacity_of: Callable[[int], int], *, mode: str,
                device: int, check_memory: bool) -> Iterable[CaptureResult]:
        """Capture it at each size's capacity, in a context of its own; with `check_memory`,
        a capacity that cannot fit is refused before anything is captured."""
        ...

    def profile(self, ctx: RunContext | None, sizes: Sequence[int], settings: ProfileSettings,
                *, capacity_of: Callable[[int], int], device: int) -> list[ProfiledClass]:
        """Capture it at each size's capacity and profile it as `settings` say."""
        ...

    def plan_target(self) -> Step:
        """The framework step `graphcert plan` measures; Refused where there is none."""
        ...


def runnable(loaded: LoadedWorkload) -> Runnable:
    """The Runnable of a loaded reference. The one place run/ tells a framework step from a
    workload graphcert records itself: everything past it calls the protocol."""
    from graphcert.frameworks.step import Step
    from graphcert.run.framework import StepRunnable
    from graphcert.run.native import NativeRunnable

    target = loaded.target
    if isinstance(target, Step):
        return StepRunnable(loaded, target)
    return NativeRunnable(loaded, target)


__all__ = ["Progress", "Refused", "Runnable", "runnable"]
