"""`graphcert bench`: graph launch against per-kernel launch, measured like nvbench."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import click

from graphcert.commands._fleet import fleet_capable
from graphcert.commands._options import (
    MAX_SECONDS,
    Bounded,
    PathParam,
    certificate_options,
    device_option,
    invocation,
    json_option,
    signing_key_option,
)
from graphcert.errors import ExitStatus

if TYPE_CHECKING:
    from graphcert.run.jobs import BenchPlan

# Placement k sits behind a pad of about k * 2 MiB (graphcert/placements.py): 1,024 placements
# pad up to 2 GiB, and each after the first opens a new context.
MAX_PLACEMENTS = 1024
# A swept option value: the plot divides by it and draws it on a log scale, so >= 1.
SWEPT_VALUE = Bounded(int, 1, 10 ** 9, unit="an option value")


def _plot_now(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """--plot is checked while parsing (writable, matplotlib there, a format it draws), so
    a plot that cannot be drawn is refused before any GPU work, not after it."""
    if value is None:
        return None
    from graphcert.kinds.sweep.views import check_plot_path

    return check_plot_path(value)


@click.command("bench")
@click.argument("workloads", nargs=-1, required=True)
@click.option("--size", "size", help="Time one size N (default without --classes: 65536).")
@click.option("--classes", help="Each class capacity in LO..HI, or each bucket of a list "
              "(1,2,4,8 or vllm:MAX / sglang:MAX).")
@click.option("--sweep", help="KEY=V1,V2,... : one run per workload option value, e.g. "
                              "kernels=1,10,100,1000 for chain; fits a + b·value.")
@click.option("--plot", "plot_path", type=PathParam(path_type=Path),
              callback=_plot_now,
              help="With --sweep: draw per-kernel cost against the swept value (the image "
                   "format follows the name: .png, .svg, .pdf, ...).")
@click.option("--stopping", type=click.Choice(["precision", "noise"]), default="precision",
              show_default=True,
              help="precision: each figure stops when the 95% interval of its median is "
                   "within --max-noise of it (--max-host-noise for figures read with the "
                   "host's clock); noise: nvbench's rule, relative standard deviation within "
                   "--max-noise (for comparison with nvbench).")
@click.option("--max-noise", type=Bounded(float, 0, 1, low_open=True, unit="a fraction"),
              default=0.005, show_default=True,
              help="The target of figures read with the device's clock (0.005 is 0.5%), and "
                   "of every figure with --stopping noise.")
@click.option("--max-host-noise", type=Bounded(float, 0, 1, low_open=True, unit="a fraction"),
              default=0.02, show_default=True,
              help="With --stopping precision: the target of figures read with the host's "
                   "clock (host enqueue, end to end), whose per-sample jitter is the host's.")
@click.option("--min-samples", type=Bounded(int, 2, 1_000_000), default=10, show_default=True,
              help="Samples per placement at least.")
@click.option("--min-time", type=Bounded(float, 0, MAX_SECONDS, unit="seconds"), default=0.1,
              show_default=True, help="Seconds of sampling per figure at least (shared by its "
                                      "placements).")
@click.option("--timeout", type=Bounded(float, 0.01, MAX_SECONDS, unit="seconds"),
              default=5.0, show_default=True,
              help="Seconds of sampling per figure (shared by its placements) after which it "
                   "stops short of its target anyway, marked so.")
@click.option("--blocker-timeout", type=Bounded(float, 1e-6, MAX_SECONDS, unit="seconds"),
              default=5.0, show_default=True,
              help="Seconds the blocking kernel holds a stream at most.")
@click.option("--flush-l2/--no-flush-l2", default=True, show_default=True,
              help="Clear L2 before every sample, as nvbench's cold measurement does; without "
                   "it, what earlier samples left in L2 moves stream figures between runs.")
@click.option("--placements", type=Bounded(int, 1, MAX_PLACEMENTS), default=8,
              show_default=True,
              help="Set the workload up this many times behind pad allocations of different "
                   "sizes; every figure is the median over placements (the stream path's "
                   "device time depends on where buffers land).")
@click.option("--placement-contexts", "placement_contexts", type=click.Choice(["new", "same"]),
              default="new", show_default=True,
              help="new: each placement after the first in a new primary context, as a new "
                   "process would have (the stream path's device time moves with the context "
                   "as much as between processes); same: every placement in one context.")
@click.option("--context", "context", type=click.Choice(["settled", "fresh", "both"]),
              default="settled", show_default=True,
              help="Driver state: settled = the several-streams state every multi-stream "
                   "application runs in; fresh = a fresh single-stream context (a child "
                   "process); both = each, reported apart.")
@click.option("--hot/--no-hot", default=True, show_default=True,
              help="Also time launches back to back with L2 warm (reported apart from the "
                   "cold figures).")
@certificate_options("Where the bench certificates go (and a --sweep's sweep certificate).",
                     "Time without writing certificates.")
@device_option
@signing_key_option
@json_option
@fleet_capable("bench")
def command(workloads: tuple[str, ...], size: str | None, classes: str | None,
            sweep: str | None, plot_path: Path | None, stopping: str, max_noise: float,
            max_host_noise: float, min_samples: int,
            min_time: float, timeout: float, blocker_timeout: float, flush_l2: bool,
            placements: int, placement_contexts: str, context: str, hot: bool,
            out_dir: Path, no_certificate: bool, device: int, as_json: bool) -> None:
    """Time each of WORKLOADS launched kernel by kernel on a stream and as one graph: host
    enqueue, device time (queued behind a blocking kernel) and end to end, plus up-front
    costs. A workload is a built-in name, path/file.py:NAME or package.module:NAME. Exits 1
    if a verdict fails or is incomplete."""
    plan = _plan(workloads, size, classes, sweep, plot_path)  # bad input: before any import

    from graphcert.kinds.bench.views import bench_json, print_run
    from graphcert.kinds.sweep.views import print_sweep
    from graphcert.render.console import print_json
    from graphcert.render.progress import progress
    from graphcert.run.bench import BenchSettings
    from graphcert.run.jobs import bench_plan
    from graphcert.stats import StopRule

    rule = StopRule(max_noise, min_samples, min_time, timeout, stopping=stopping,
                    max_host_noise=max_host_noise)
    settings = BenchSettings(rule, flush_l2,
                             blocker_timeout, placements=placements,
                             new_contexts=placement_contexts == "new", hot=hot, context=context)
    inv = invocation()
    out, err, options = inv.out, inv.err, inv.options
    show = None if as_json else (  # each workload as it is done
        lambda run: print_run(out, err, run.ref, run.result, run.certificate))
    with progress(plan.units, "bench", options, inv.events, console=err) as advance:
        done = bench_plan(plan, settings, device=device,
                          out_dir=None if no_certificate else out_dir, options=options,
                          on_result=show, on_progress=advance)
    if done.fit is not None:
        print_sweep(out, err, done.fit, done.sweep_certificate, named_plot=done.sweep_plot,
                    asked_plot=plot_path, as_json=as_json)
    if as_json:
        print_json(bench_json([(r.ref, r.result, r.certificate) for r in done.runs], done.fit))
    # Like verify: a failed or incomplete verdict exits 1, so a fleet run sees it.
    if not done.passed:
        click.get_current_context().exit(ExitStatus.FAILED)


def _plan(workloads: tuple[str, ...], size: str | None, classes: str | None,
          sweep: str | None, plot_path: Path | None) -> BenchPlan:
    """What the command line asks to bench: the sizes, and one run per workload or, with
    --sweep, per swept value (InputError for a combination that cannot run)."""
    from graphcert.buckets import parse_buckets, parse_size
    from graphcert.errors import InputError

    if size is not None and classes is not None:
        raise InputError("give --size or --classes, not both")
    sizes = (parse_buckets(classes) if classes is not None  # "" is an error, not a default
             else [parse_size(size if size is not None else 1 << 16)])
    if sweep is not None and len(workloads) > 1:
        raise InputError("--sweep fits one workload's option; give one workload",
                         hint=f"run graphcert bench {workloads[0]} --sweep {sweep}, then the next")
    if plot_path is not None and sweep is None:
        raise InputError("--plot draws a --sweep; give --sweep KEY=V1,V2,...")
    swept = _swept(workloads, sweep)
    from graphcert.run.jobs import BenchPlan, SweptOption  # imports CUDA: after the checks

    if swept is None:
        return BenchPlan(workloads, sizes)
    key, values = swept
    refs = tuple(f"{workloads[0]}[{key}={v}]" for v in values)
    return BenchPlan(refs, sizes, SweptOption(key, values, workloads[0]))


def _swept(workloads: tuple[str, ...], sweep: str | None) -> tuple[str, tuple[int, ...]] | None:
    """--sweep KEY=V1,V2,... as (key, values) for the one workload given (None: no sweep);
    each run adds [key=value] to it."""
    from graphcert.errors import InputError

    if sweep is None:
        return None
    key, sep, values = sweep.partition("=")
    if not sep or not key.strip().isidentifier() or not values.strip():
        raise InputError(f"--sweep {sweep!r} is malformed", hint="write KEY=V1,V2,...")
    nums = [int(SWEPT_VALUE.check(v, f"--sweep {key.strip()}"))
            for v in values.split(",") if v.strip()]
    twice = sorted(v for v, count in Counter(nums).items() if count > 1)
    if twice:  # two runs of one value would write one certificate twice
        raise InputError(f"--sweep {key.strip()} gives {twice[0]} twice",
                         hint="give each value once")
    if len(nums) < 2:
        raise InputError(f"--sweep {sweep!r} gives {len(nums)} value(s); a + b·value needs "
                         f"two or more", hint="write KEY=V1,V2,...")
    for w in workloads:
        if "[" in w:
            raise InputError(f"--sweep sets options itself; give {w.split('[')[0]} plainly")
    return key.strip(), tuple(nums)
