"""`--device all` / `--device 0,2` for capture, verify and bench: one worker process per GPU.

`fleet_capable(name)` wraps a command's body: with one device it runs the body as before; with
several it checks the workloads, the output folder and the device list, then starts a worker
per GPU with a job of the same arguments on that GPU (graphcert.run.fleet), shows each GPU's
result as it finishes, and exits with the worst worker's code.
"""

from __future__ import annotations

import functools
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from graphcert.commands._options import DeviceSet, cli_options
from graphcert.options import Options

F = TypeVar("F", bound=Callable[..., Any])
ARGV_KEY = "graphcert.argv"  # the group stores the raw arguments here (graphcert.cli)


def fleet_capable(command: str) -> Callable[[F], F]:
    """Run the wrapped command body once per GPU when --device names several."""
    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def body(**params: Any) -> Any:
            if not isinstance(params.get("device"), DeviceSet):
                return fn(**params)
            return fan_out(command, params)

        return body  # type: ignore[return-value]

    return wrap


def _precheck(params: dict[str, Any]) -> None:
    """What every worker would refuse alike, refused once before any starts."""
    from graphcert.fileio import ensure_writable_dir
    from graphcert.workloads.registry import load

    refs = list(params.get("workloads") or ()) + ([params["workload"]]
                                                   if params.get("workload") else [])
    for ref in refs:
        load(ref)
    if params.get("out_dir") is not None and not params.get("no_certificate"):
        ensure_writable_dir(params["out_dir"])


def _display_env(options: Options) -> dict[str, str]:
    """Workers print into pipes: give them the parent terminal's colour and width."""
    if not sys.stdout.isatty():
        return {}
    env = {"COLUMNS": options.columns or str(shutil.get_terminal_size().columns)}
    if not options.no_color:
        env["FORCE_COLOR"] = "1"
    return env


def fan_out(command: str, params: dict[str, Any]) -> None:
    """The several-GPU run of `command`: check, start a worker per GPU, show, exit worst."""
    from graphcert.errors import InputError
    from graphcert.render.console import print_json
    from graphcert.render.fleet import fleet_display, merged_json, summary_line
    from graphcert.run import fleet

    ctx = click.get_current_context()
    devices: DeviceSet = params["device"]
    args = ctx.meta.get(ARGV_KEY)
    if args is None:
        raise InputError(f"--device {devices} needs the graphcert command line",
                         hint="run it as `graphcert ...` or `python -m graphcert ...`")
    _precheck(params)
    gpus = fleet.select_gpus(devices.indices, fleet.list_gpus())
    as_json = bool(params.get("as_json"))
    several = len(gpus) > 1
    if several and params.get("plot_path") is not None:  # every worker would draw one file
        raise InputError("--plot draws one GPU's sweep, and --device names several",
                         hint="plot with --device N, or leave --plot out")
    options = cli_options(ctx)
    display = fleet_display(gpus, command, as_json=as_json, options=options)
    with display as (on_progress, on_done, bars):
        env = fleet.worker_env(extra=_display_env(options))
        jobs = []
        for gpu in gpus:
            extra: list[str] = []
            if command == "capture" and several:  # snapshot names carry no GPU: a folder each
                from graphcert.cert.document import safe_name
                from graphcert.cert.results.fleet import short_uuid

                sub = Path(params["out_dir"]) / safe_name(f"{gpu.name}-{short_uuid(gpu.uuid)}")
                extra = ["--out", str(sub)]
            jobs.append((gpu, fleet.command_job(args, gpu, extra, several=several,
                                                progress=bars), env))
        result = fleet.run_workers(command, jobs, on_progress=on_progress, on_done=on_done)
    common = result.common_error()
    # every worker refused the same input (exit 2 each): say it once; the same crash or
    # signal on every GPU is no bad input, so each worker's outcome is shown then
    if common is not None and all(w.exit_code == 2 for w in result.workers):
        raise common.as_error()
    if as_json:
        print_json(merged_json(result))
    click.echo(summary_line(result), err=True)
    ctx.exit(result.exit_code)
