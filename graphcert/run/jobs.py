"""The one call each GPU command makes: load the workloads (bad references fail before any GPU
work), open the device, run, write certificates from the typed results, return them.

`graphcert capture`, `verify` and `bench` call these; so can a script. Runs on a GPU.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from graphcert.buckets import class_of
from graphcert.cert.results.capture import CaptureResult
from graphcert.cert.results.figures import QUANTITIES
from graphcert.fileio import ensure_writable_dir
from graphcert.kinds.bench.result import BenchResult
from graphcert.kinds.sweep.result import SweepFit
from graphcert.kinds.topology.result import AnyClass, VerifyResult
from graphcert.options import Options
from graphcert.run import environment
from graphcert.run.bench import BenchSettings, fit_sweep
from graphcert.run.native import with_other_context as with_other_context  # re-exported
from graphcert.run.runnable import Runnable, runnable
from graphcert.run.session import context_for
from graphcert.workloads.registry import load

R = TypeVar("R", VerifyResult, BenchResult)


@dataclass(frozen=True)
class Certified(Generic[R]):
    """One workload's typed result and the certificate written for it (None: not written)."""

    ref: str
    result: R
    certificate: Path | None = None


def _prepare(refs: Sequence[str], out_dir: Path | None) -> list[Runnable]:
    subjects = [runnable(load(ref)) for ref in refs]  # bad references fail before GPU work
    if out_dir is not None:
        ensure_writable_dir(out_dir)
    return subjects


def _certify(result: R, one: Runnable, env: dict[str, Any], out_dir: Path | None,
             options: Options, on_result: Callable[[Certified[R]], None] | None
             ) -> Certified[R]:
    """Write the result's certificate when asked to, and report it."""
    path = (environment.write(result, out_dir, one.loaded, env, key=options.signing_key,
                              uuid_names=options.uuid_names)
            if out_dir else None)
    done = Certified(one.ref, result, path)
    if on_result is not None:
        on_result(done)
    return done


def verify_workloads(refs: Sequence[str], capacities: Sequence[int], *, samples: int = 4,
                     seed: int = 0, mode: str = "global", classes_spec: str | None = None,
                     device: int = 0, out_dir: Path | None = None, options: Options,
                     on_class: Callable[[str, AnyClass], None] | None = None,
                     on_result: Callable[[Certified[VerifyResult]], None] | None = None,
                     on_progress: Callable[..., None] | None = None,
                     ) -> list[Certified[VerifyResult]]:
    """Verify each workload over `capacities`; with `out_dir`, write a topology certificate
    per workload (signed with `options.signing_key`, named with the GPU's short UUID as
    `options.uuid_names` says: see environment.gpu_label). `on_class(ref, cls)` after each class,
    `on_result` after each workload."""
    subjects = _prepare(refs, out_dir)
    done: list[Certified[VerifyResult]] = []
    with context_for(subjects, device, seed) as ctx:
        env = environment.environment(device, options.git) if out_dir is not None else {}
        for one in subjects:
            def each(cls: AnyClass, ref: str = one.ref) -> None:
                if on_class is not None:
                    on_class(ref, cls)

            result = one.verify(ctx, capacities, samples=samples, seed=seed, mode=mode,
                                classes_spec=classes_spec, device=device, on_class=each,
                                on_progress=on_progress)
            done.append(_certify(result, one, env, out_dir, options, on_result))
    return done


def bench_workloads(runs: Sequence[str], sizes: Sequence[int], settings: BenchSettings, *,
                    device: int = 0, out_dir: Path | None = None, options: Options,
                    on_result: Callable[[Certified[BenchResult]], None] | None = None,
                    on_progress: Callable[..., None] | None = None,
                    ) -> list[Certified[BenchResult]]:
    """Bench each workload reference at `sizes`; with `out_dir`, write a bench certificate
    per run (signed with `options.signing_key`, named as `options.uuid_names` says: see
    environment.gpu_label)."""
    subjects = _prepare(runs, out_dir)
    done: list[Certified[BenchResult]] = []
    with context_for(subjects, device) as ctx:
        env = environment.environment(device, options.git) if out_dir is not None else {}
        for one in subjects:
            result = one.bench(ctx, sizes, settings, device=device, on_progress=on_progress)
            done.append(_certify(result, one, env, out_dir, options, on_result))
    return done


@dataclass(frozen=True)
class SweptOption:
    """A `--sweep KEY=V1,V2,...` of one workload: one run per value, fitted a + b·value."""

    key: str
    values: tuple[int, ...]
    base_ref: str  # the workload without the swept option


@dataclass(frozen=True)
class BenchPlan:
    """What one bench runs: the references (a sweep's: one per value, in order), the
    sizes, and the sweep when there is one."""

    refs: tuple[str, ...]
    sizes: Sequence[int]
    sweep: SweptOption | None = None

    @property
    def units(self) -> int:
        """Progress units of the whole plan: references x sizes x quantities."""
        return len(self.refs) * len(self.sizes) * len(QUANTITIES)


@dataclass(frozen=True)
class BenchRun:
    """What a bench plan gave: each run, and for a sweep its fit, the sweep certificate
    and the plot that certificate names (None: not written; the caller draws it)."""

    runs: list[Certified[BenchResult]]
    fit: SweepFit | None = None
    sweep_certificate: Path | None = None
    sweep_plot: Path | None = None

    @property
    def passed(self) -> bool:
        return all(r.result.verdict.passed for r in self.runs)


def bench_plan(plan: BenchPlan, settings: BenchSettings, *, device: int = 0,
               out_dir: Path | None = None, options: Options,
               on_result: Callable[[Certified[BenchResult]], None] | None = None,
               on_progress: Callable[..., None] | None = None) -> BenchRun:
    """`graphcert bench`'s one call: bench every run of `plan` (bench_workloads), then fit
    its sweep (`sweep`); with `out_dir`, the certificates of both (named as
    `options.uuid_names` says: see environment.gpu_label)."""
    runs = bench_workloads(plan.refs, plan.sizes, settings, device=device, out_dir=out_dir,
                           options=options, on_result=on_result, on_progress=on_progress)
    if plan.sweep is None:
        return BenchRun(runs)
    fit, cert, plot = sweep(plan.sweep.key, plan.sweep.values, runs,
                            base_ref=plan.sweep.base_ref, device=device, out_dir=out_dir,
                            options=options)
    return BenchRun(runs, fit, cert, plot)


def sweep(key: str, values: Sequence[int], runs: Sequence[Certified[BenchResult]], *,
          base_ref: str | None = None, device: int = 0, out_dir: Path | None = None,
          options: Options) -> tuple[SweepFit, Path | None, Path | None]:
    """The a + b·value fit over swept runs (each run's first size); with `out_dir` and
    `base_ref`, also a sweep certificate beside the runs' own. Returns the fit, the
    certificate's path and the plot path the certificate names (None: not written; where
    matplotlib is installed) for the caller to draw; nothing is drawn here."""
    fit = fit_sweep(key, [(v, r.result.sizes[0]) for v, r in zip(values, runs, strict=True)])
    fit = replace(fit, certificates=tuple(r.certificate.name if r.certificate else None
                                          for r in runs))
    if out_dir is None or base_ref is None:
        return fit, None, None
    loaded = load(base_ref)
    env = environment.environment(device, options.git)
    plot: Path | None = None
    names = options.uuid_names  # a worker's job already decided it (graphcert.invocation)
    # Without matplotlib there is no plot: the gate's HTML report draws the sweep itself.
    if importlib.util.find_spec("matplotlib") is not None:
        plot = out_dir / environment.sweep_filename(
            loaded, key, environment.gpu_label(env, names), ".png")
        fit = replace(fit, plot=plot.name)
    return fit, environment.write_sweep(fit, out_dir, loaded, env, key=options.signing_key,
                                        uuid_names=names), plot


def capture_workload(ref: str, sizes: list[int], *, mode: str = "global", device: int = 0,
                     out_dir: Path, capacity_of: Callable[[int], int] | None = None
                     ) -> list[CaptureResult]:
    """Capture `ref` at each size (its class, or `capacity_of(n)` for a bucket list), writing
    snapshot, DOT (and SVG where Graphviz is installed) per class. A class that cannot fit in
    device memory is refused before anything is captured."""
    from graphcert.run.capture import write_outputs

    ensure_writable_dir(out_dir)
    one = runnable(load(ref))
    rows = []
    # Files are written as each result comes: a workload's before its next size is captured.
    for result in one.capture(sizes, capacity_of or class_of, mode=mode, device=device,
                              check_memory=True):
        files = write_outputs(result, out_dir, one.name)
        rows.append(replace(result, files=tuple(str(f) for f in files)))
    return rows
