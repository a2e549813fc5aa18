"""`graphcert bench`: graph launch against per-kernel launch, measured like nvbench."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from graphcert.commands._options import device_option, json_option, signing_key_option


@click.command("bench")
@click.argument("workloads", nargs=-1, required=True)
@click.option("--size", "size", help="One size N.")
@click.option("--classes", help="Each class capacity in LO..HI.")
@click.option("--sweep", help="KEY=V1,V2,... : one run per workload option value, e.g. "
                              "kernels=1,10,100,1000 for chain; fits a + b·value.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, path_type=Path),
              help="With --sweep: draw per-kernel cost against the swept value.")
@click.option("--max-noise", type=click.FloatRange(min=0), default=0.005, show_default=True,
              help="Stop when relative standard deviation is at most this.")
@click.option("--min-samples", type=click.IntRange(min=2), default=10, show_default=True)
@click.option("--min-time", type=click.FloatRange(min=0), default=0.5, show_default=True,
              help="Seconds of sampling at least.")
@click.option("--timeout", type=click.FloatRange(min=0.01), default=5.0, show_default=True,
              help="Seconds after which a noisy measurement stops anyway.")
@click.option("--blocker-timeout", type=click.FloatRange(min=1e-6), default=5.0,
              show_default=True, help="Seconds the blocking kernel holds a stream at most.")
@click.option("--flush-l2/--no-flush-l2", default=True, show_default=True,
              help="Clear L2 before every sample, as nvbench's cold measurement does; without "
                   "it, what earlier samples left in L2 moves stream figures between runs.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("reports"), show_default=True)
@click.option("--no-certificate", is_flag=True)
@device_option
@signing_key_option
@json_option
def command(workloads: tuple[str, ...], size: str | None, classes: str | None,
            sweep: str | None, plot_path: Path | None, max_noise: float, min_samples: int,
            min_time: float, timeout: float, blocker_timeout: float, flush_l2: bool,
            out_dir: Path, no_certificate: bool, device: int, as_json: bool) -> None:
    """Time WORKLOAD launched kernel by kernel on a stream and as one graph: host enqueue,
    device time (queued behind a blocking kernel) and end to end, plus up-front costs."""
    from graphcert.classes import parse_classes, parse_size
    from graphcert.errors import InputError
    from graphcert.fileio import ensure_writable_dir
    from graphcert.workloads.registry import load

    if size is not None and classes is not None:
        raise InputError("give --size or --classes, not both")
    sizes = (parse_classes(classes) if classes is not None  # "" is an error, not a default
             else [parse_size(size if size is not None else 1 << 16)])
    if plot_path is not None and sweep is None:
        raise InputError("--plot draws a --sweep; give --sweep KEY=V1,V2,...")
    runs = _runs(workloads, sweep)
    loaded = [(ref, load(ref)) for ref, _, _ in runs]
    if not no_certificate:
        ensure_writable_dir(out_dir)

    from graphcert.cuda.context import RunContext
    from graphcert.render.bench import plot_sweep, size_table, sweep_table, upfront_table
    from graphcert.render.console import (
        print_json,
        progress_allowed,
        stderr_console,
        stdout_console,
    )
    from graphcert.run import environment as certify
    from graphcert.run.bench import BenchSettings, bench, fit_sweep
    from graphcert.stats import StopRule

    settings = BenchSettings(StopRule(max_noise, min_samples, min_time, timeout), flush_l2,
                             blocker_timeout)
    out, err = stdout_console(), stderr_console()
    docs: list[dict[str, Any]] = []
    points: list[dict[str, Any]] = []
    with RunContext.open(device) as ctx:
        env = certify.environment(device) if not no_certificate else {}
        for (ref, key, value), (_, workload) in zip(runs, loaded, strict=True):
            if progress_allowed():
                err.print(f"benching {ref} …")
            results, _session = bench(ctx, ref, sizes, settings, workload=workload)
            if key is not None:
                points.append({"value": value, "result": results["sizes"][0]})
            bare = results["bare_launch_s"]
            reasons = [f"n={r['n']:,}: SM clock dropped from {r['clock_mhz']['before']:.0f} "
                       f"to {r['clock_mhz']['after']:.0f} MHz (throttled)"
                       for r in results["sizes"] if r["throttled"]]
            path = None
            if not no_certificate:
                path = certify.write("bench", out_dir, ref, workload, env, results, reasons,
                                     not reasons)
            docs.append({"workload": ref, "results": results,
                         "certificate": str(path) if path else None})
            if not as_json:
                for row in results["sizes"]:
                    out.print(size_table(ref, row))
                    if row["stream_path"] == "prepacked":
                        out.print(f"stream path host cost per launch "
                                  f"{row['stream_host_per_op_s'] * 1e6:.2f} µs; bare "
                                  f"cuLaunchKernel loop {bare * 1e6:.2f} µs "
                                  f"({row['stream_host_per_op_s'] / bare:.2f}×)")
                out.print(upfront_table(results["sizes"]))
                if path:
                    err.print(f"certificate: {path}")
    sweep_doc = None
    if points:
        key = runs[0][1]
        fit = fit_sweep(points)
        sweep_doc = {"key": key, "values": [p["value"] for p in points], "fit": fit}
        if not as_json:
            out.print(sweep_table(str(key), fit))
        if plot_path is not None:
            plot_sweep(str(key), points, plot_path)
            err.print(f"plot: {plot_path}")
    if as_json:
        print_json(json.dumps({"runs": docs, "sweep": sweep_doc}, indent=2))


def _runs(workloads: tuple[str, ...], sweep: str | None) -> list[tuple[str, str | None, Any]]:
    """(reference, swept key, value) per run; a sweep adds [key=value] to each workload."""
    from graphcert.errors import InputError

    if sweep is None:
        return [(w, None, None) for w in workloads]
    key, sep, values = sweep.partition("=")
    if not sep or not key.strip().isidentifier() or not values.strip():
        raise InputError(f"--sweep {sweep!r} is malformed", hint="write KEY=V1,V2,...")
    try:
        nums = [int(v) for v in values.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--sweep values {values!r} are not integers") from None
    runs: list[tuple[str, str | None, Any]] = []
    for w in workloads:
        if "[" in w:
            raise InputError(f"--sweep sets options itself; give {w.split('[')[0]} plainly")
        runs.extend((f"{w}[{key.strip()}={v}]", key.strip(), v) for v in nums)
    return runs
