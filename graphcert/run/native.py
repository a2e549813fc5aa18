"""A workload graphcert records itself (a built-in or a user's `Workload`) as a `Runnable`:
its own capture in graphcert's RunContext, verify (run/verify.py), bench (run/bench.py, and
run/fresh.py's child processes for the fresh single-stream context), capture
(run/capture.py) and profile (run/profile.py). Runs on a GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from graphcert.buckets import class_of
from graphcert.cert.results.figures import QUANTITIES
from graphcert.errors import InputError
from graphcert.kinds.bench.result import BenchResult
from graphcert.run.runnable import Progress, Refused
from graphcert.workloads.loaded import LoadedWorkload, NativeWorkload

if TYPE_CHECKING:
    from graphcert.cert.results.capture import CaptureResult
    from graphcert.cuda.context import RunContext
    from graphcert.frameworks.step import Step
    from graphcert.kinds.profile.result import ProfiledClass
    from graphcert.kinds.topology.result import AnyClass, VerifyResult
    from graphcert.run.harness import BenchSettings
    from graphcert.run.profile_trace import ProfileSettings


def _opened(ctx: RunContext | None, ref: str) -> RunContext:
    """The RunContext session.context_for opened for a workload (it opens one whenever a
    workload is among those run, so None here is a caller's mistake)."""
    if ctx is None:
        raise RuntimeError(f"{ref} runs in graphcert's own context, and none was opened")
    return ctx


def with_other_context(settled: BenchResult, fresh: BenchResult) -> BenchResult:
    """`settled` with the fresh-context run beside it; the verdict is both (a failed or
    incomplete fresh half is never hidden behind a settled pass)."""
    return replace(settled, other_context=fresh,
                   verdict=BenchResult.judge(settled.sizes,
                                             clock_unavailable=settled.clock_unavailable,
                                             other_context=fresh))


@dataclass(frozen=True)
class NativeRunnable:
    """A workload graphcert records itself, by the reference it was loaded from."""

    loaded: LoadedWorkload  # what certificates name (environment.write)
    workload: NativeWorkload

    @property
    def ref(self) -> str:
        """The reference it was loaded from."""
        return self.loaded.ref

    @property
    def name(self) -> str:
        """The workload's name."""
        return self.workload.name

    @property
    def needs_context(self) -> bool:
        """Always: graphcert records it in its own RunContext."""
        return True

    def unbucketed(self, n: int) -> int:
        """n's capacity class (the power of two at or above it)."""
        return class_of(n)

    def profile_sizes(self) -> Sequence[int]:
        """bench's default size."""
        from graphcert.run.profile import DEFAULT_SIZE

        return [DEFAULT_SIZE]

    def verify(self, ctx: RunContext | None, capacities: Sequence[int], *, samples: int,
               seed: int, mode: str, classes_spec: str | None, device: int,
               on_class: Callable[[AnyClass], None] | None,
               on_progress: Progress | None) -> VerifyResult:
        """run/verify.py's verify over its classes, captured in `mode`."""
        from graphcert.run.verify import verify

        return verify(_opened(ctx, self.ref), self.ref, capacities, samples=samples, seed=seed,
                      mode=mode, workload=self.workload, classes_spec=classes_spec,
                      on_class=on_class, on_progress=on_progress)

    def bench(self, ctx: RunContext | None, sizes: Sequence[int], settings: BenchSettings, *,
              device: int, on_progress: Progress | None) -> BenchResult:
        """run/bench.py's bench in the settled context; with --context fresh or both, child
        processes time the fresh single-stream state first (fresh: that run alone; both: beside
        the settled one, and in its verdict)."""
        from graphcert.run.bench import bench
        from graphcert.run.fresh import bench_fresh, child_timeout_s

        fresh = (bench_fresh(self.ref, sizes, settings, device,
                             timeout_s=child_timeout_s(settings, sizes))
                 if settings.context in ("fresh", "both") else None)
        if fresh is not None and settings.context == "fresh":
            if on_progress:
                on_progress(len(sizes) * len(QUANTITIES))
            return fresh
        result = bench(_opened(ctx, self.ref), self.ref, sizes, settings,
                       workload=self.workload, on_progress=on_progress)
        return with_other_context(result, fresh) if fresh is not None else result

    def capture(self, sizes: Sequence[int], capacity_of: Callable[[int], int], *, mode: str,
                device: int, check_memory: bool) -> Iterator[CaptureResult]:
        """Each size captured in `mode` at its capacity, in a RunContext opened for it; a
        result is yielded before the next size is captured."""
        from graphcert.cuda.context import RunContext
        from graphcert.run.capture import capture_sizes
        from graphcert.run.session import WorkloadSession

        with RunContext.open(device) as ctx:
            session = WorkloadSession(ctx, self.ref, self.workload)
            if check_memory:
                for n in sizes:
                    shortfall = session.memory_shortfall(capacity_of(n))
                    if shortfall:
                        raise InputError(shortfall,
                                         hint="use a smaller --size or --classes range")
            yield from capture_sizes(session, list(sizes), mode, capacity_of)

    def profile(self, ctx: RunContext | None, sizes: Sequence[int], settings: ProfileSettings,
                *, capacity_of: Callable[[int], int], device: int) -> list[ProfiledClass]:
        """run/profile.py's profile of a graphcert workload, its graph captured per class as
        verify and bench capture it."""
        from graphcert.run.profile import profile_built_in

        return profile_built_in(_opened(ctx, self.ref), self.ref, self.workload, sizes,
                                settings, capacity_of=capacity_of)

    def plan_target(self) -> Step:
        """Refused: `graphcert plan` measures framework steps only."""
        raise Refused("plan", f"{self.ref} is a built-in workload; graphcert plan measures "
                              "framework steps", hint="give path/file.py:STEP or module:STEP")


__all__ = ["NativeRunnable", "with_other_context"]
