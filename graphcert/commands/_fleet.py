"""`--device all` / `--device 0,2` for capture, verify and bench: one worker process per GPU.

`fleet_capable(name)` wraps a command's body: with one device it runs the body as before; with
several it checks the workloads, the output folder and the device list, then starts a worker
per GPU with a typed job (the same parameters, on that GPU) (graphcert.run.fleet), shows each GPU's
result as it finishes, and exits with the worst worker's code.
"""

from __future__ import annotations

import functools
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from graphcert.commands._options import DeviceSet, invocation
from graphcert.options import Options

if TYPE_CHECKING:
    from graphcert.run.worker import ParamValue

F = TypeVar("F", bound=Callable[..., Any])


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


def _precheck(params: Mapping[str, Any]) -> None:
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


def job_params(params: Mapping[str, object]) -> dict[str, ParamValue]:
    """The command's parsed parameters as a worker job carries them: paths as text, the
    device left out (each job names its GPU)."""
    out: dict[str, ParamValue] = {}
    for name, value in params.items():
        if name == "device":
            continue
        if isinstance(value, Path):
            value = str(value)
        elif isinstance(value, list):
            value = tuple(value)
        if not isinstance(value, (str, int, float, bool, tuple, type(None))):
            raise TypeError(f"--device all cannot pass {name}={value!r} to a worker")
        out[name] = value
    return out


def fan_out(command: str, params: Mapping[str, object]) -> None:
    """The several-GPU run of `command`: check, start a worker per GPU, show, exit worst."""
    from graphcert.errors import InputError
    from graphcert.render.console import print_json
    from graphcert.render.fleet import fleet_display, merged_json, summary_line
    from graphcert.run import fleet

    ctx = click.get_current_context()
    devices = params["device"]
    assert isinstance(devices, DeviceSet)  # fleet_capable sends only a --device set here
    _precheck(params)
    gpus = fleet.select_gpus(devices.indices, fleet.list_gpus())
    as_json = bool(params.get("as_json"))
    several = len(gpus) > 1
    if several and params.get("plot_path") is not None:  # every worker would draw one file
        raise InputError("--plot draws one GPU's sweep, and --device names several",
                         hint="plot with --device N, or leave --plot out")
    inv = invocation(ctx)
    key_file = str(inv.key_file) if inv.key_file is not None else None
    display = fleet_display(gpus, command, as_json=as_json, options=inv.options,
                            console=inv.err)
    with display as (on_progress, on_done, bars):
        env = fleet.worker_env(inv.environ, extra=_display_env(inv.options))
        jobs = []
        for gpu in gpus:
            ours = job_params(params)
            if command == "capture" and several:  # snapshot names carry no GPU: a folder each
                from graphcert.cert.document import safe_name
                from graphcert.cert.results.fleet import short_uuid

                ours["out_dir"] = str(Path(cast("str | Path", params["out_dir"]))
                                      / safe_name(f"{gpu.name}-{short_uuid(gpu.uuid)}"))
            jobs.append((gpu, fleet.command_job(command, ours, gpu, several=several,
                                                progress=bars, key_file=key_file), env))
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
