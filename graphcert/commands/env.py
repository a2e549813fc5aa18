"""`graphcert env`: driver, CUDA and library versions, every GPU, the kernel cache."""

from __future__ import annotations

import json

import click

from graphcert.commands._options import json_option


@click.command("env")
@json_option
def command(as_json: bool) -> None:
    """Driver and CUDA versions, cuda-bindings and NVRTC versions, each GPU, the cache dir."""
    from graphcert.cuda.device import environment
    from graphcert.paths import cache_dir
    from graphcert.render.console import print_json, stdout_console

    env = environment()
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
        head.add_row(label, str(env.get(key)))
    console.print(head)
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
