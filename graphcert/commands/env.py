"""`graphcert env`: driver, CUDA and library versions, every GPU, the kernel cache.

On a machine without a driver it says so and exits 0 (it is informational); scripts that
need a GPU pass --require-gpu and get exit 3 there.
"""

from __future__ import annotations

import json
from typing import Any

import click

from graphcert.commands._options import json_option


@click.command("env")
@json_option
@click.option("--require-gpu", is_flag=True,
              help="Exit 3 when there is no NVIDIA driver or device (default: say so, exit 0).")
def command(as_json: bool, require_gpu: bool) -> None:
    """Driver and CUDA versions, cuda-bindings and NVRTC versions, each GPU, the cache dir."""
    from graphcert.errors import NoDriverError
    from graphcert.paths import cache_dir
    from graphcert.render.console import print_json, stdout_console

    try:
        from graphcert.cuda.device import environment

        env = environment()
    except NoDriverError as exc:
        if require_gpu:
            raise
        env = _without_driver(exc.one_line())
    env["cache_dir"] = str(cache_dir())
    if as_json:
        print_json(json.dumps(env, indent=2))
        return
    from rich.table import Table

    console = stdout_console()
    head = Table.grid(padding=(0, 2))
    for key, label in (("driver_version", "driver"), ("cuda_version", "CUDA (driver API)"),
                       ("cuda_bindings_version", "cuda-bindings"), ("nvrtc_version", "NVRTC"),
                       ("python", "Python"), ("host", "host"), ("cache_dir", "kernel cache")):
        value = env.get(key)
        head.add_row(label, str(value) if value is not None else
                     "not found" if key == "driver_version" else "-")
    console.print(head)
    if env.get("no_driver"):
        console.print(f"GPUs: none here ({env['no_driver']})", markup=False)
        return
    gpus = Table(title="GPUs")
    for col in ("#", "name", "uuid", "cc", "SMs", "memory", "SM clock", "mem clock", "L2"):
        gpus.add_column(col)
    for g in env["gpus"]:
        gpus.add_row(str(g["index"]), g["name"], g["uuid"], g["compute_capability"],
                     str(g["sm_count"]), f"{g['memory_bytes'] / 2**30:.1f} GiB",
                     f"{g['clock_mhz']} MHz" if g["clock_mhz"] else "?",
                     f"{g['memory_clock_mhz']} MHz" if g["memory_clock_mhz"] else "?",
                     f"{g['l2_bytes'] / 2**20:.0f} MiB")
    console.print(gpus)


def _without_driver(reason: str) -> dict[str, Any]:
    """What can be said with no driver: library versions, and why there are no GPUs."""
    env: dict[str, Any] = {"driver_version": None, "cuda_version": None}
    try:
        from graphcert.cuda.device import software_versions

        env.update(software_versions())
    except Exception as exc:  # noqa: BLE001 - informational; NVRTC may be absent as well
        env["software_versions_error"] = str(exc).splitlines()[0] if str(exc) else repr(exc)
    env["gpus"] = []
    env["no_driver"] = reason
    return env
