"""A framework step (`graphcert.step(...)`) as a `Runnable`: captured by its framework in the
framework's own context, padded per bucket. Verify and capture are run/steps.py's, bench is
run/steps_bench.py's, profile run/profile.py's framework-step half. Runs on a GPU (or on a
registered synthetic framework in the CPU tests).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphcert.frameworks.step import Step
from graphcert.run.runnable import Progress
from graphcert.workloads.loaded import LoadedWorkload

if TYPE_CHECKING:
    from graphcert.cert.results.capture import CaptureResult
    from graphcert.cuda.context import RunContext
    from graphcert.kinds.bench.result import BenchResult
    from graphcert.kinds.profile.result import ProfiledClass
    from graphcert.kinds.topology.result import AnyClass, VerifyResult
    from graphcert.run.harness import BenchSettings
    from graphcert.run.profile_trace import ProfileSettings


@dataclass(frozen=True)
class StepRunnable:
    """A framework step, by the reference it was loaded from. graphcert's own RunContext
    (`ctx`) is never used: the step runs in its framework's context on device `device`."""

    loaded: LoadedWorkload  # what certificates name (environment.write)
    step: Step

    @property
    def ref(self) -> str:
        """The reference it was loaded from."""
        return self.loaded.ref

    @property
    def name(self) -> str:
        """The step's name."""
        return self.step.name

    @property
    def needs_context(self) -> bool:
        """Never: its framework opens its own context."""
        return False

    def unbucketed(self, n: int) -> int:
        """n itself: without a bucket list a step is captured at the size asked for."""
        return n

    def profile_sizes(self) -> Sequence[int]:
        """graphcert.verify_step's buckets (each captured at its bucket)."""
        from graphcert.buckets import parse_buckets
        from graphcert.run.profile import STEP_BUCKETS

        return parse_buckets(STEP_BUCKETS)

    def verify(self, ctx: RunContext | None, capacities: Sequence[int], *, samples: int,
               seed: int, mode: str, classes_spec: str | None, device: int,
               on_class: Callable[[AnyClass], None] | None,
               on_progress: Progress | None) -> VerifyResult:
        """run/steps.py's verify_step: captured by its framework (`mode` is graphcert's
        capture mode, which a framework's capture does not take), padded per bucket."""
        from graphcert.run.steps import verify_step

        return verify_step(self.step, self.ref, capacities, samples=samples, seed=seed,
                           classes_spec=classes_spec, on_class=on_class,
                           on_progress=on_progress, device=device)

    def bench(self, ctx: RunContext | None, sizes: Sequence[int], settings: BenchSettings, *,
              device: int, on_progress: Progress | None) -> BenchResult:
        """run/steps_bench.py's replay against the eager call, in the framework's context
        (whatever `settings.context` says: the framework owns the context it runs in)."""
        from graphcert.run.steps_bench import bench_step

        return bench_step(self.step, self.ref, sizes, settings, device=device,
                          on_progress=on_progress)

    def capture(self, sizes: Sequence[int], capacity_of: Callable[[int], int], *, mode: str,
                device: int, check_memory: bool) -> list[CaptureResult]:
        """run/steps.py's capture_step, once per bucket (a step declares no memory need,
        so there is nothing to check up front)."""
        from graphcert.run.steps import capture_step

        return capture_step(self.step, self.ref, sizes, capacity_of, device=device)

    def profile(self, ctx: RunContext | None, sizes: Sequence[int], settings: ProfileSettings,
                *, capacity_of: Callable[[int], int], device: int) -> list[ProfiledClass]:
        """run/profile.py's profile_step: captured by its framework at each size's bucket,
        replayed with the framework's own launch on its stream."""
        from graphcert.run.profile import profile_step

        return profile_step(self.step, self.ref, sizes, settings, device=device,
                            capacity_of=capacity_of)

    def plan_target(self) -> Step:
        """The step itself."""
        return self.step


__all__ = ["StepRunnable"]
