"""`graphcert env`: driver, CUDA and library versions, every GPU, the kernel cache.

On a machine without a driver it says so and exits 0 (it is informational); scripts that
need a GPU pass --require-gpu and get exit 3 there.
"""

from __future__ import annotations

import json

import click

from graphcert.commands._options import invocation, json_option


@click.command("env")
@json_option
@click.option("--require-gpu", is_flag=True,
              help="Exit 3 when there is no NVIDIA driver or device (default: say so, exit 0).")
def command(as_json: bool, require_gpu: bool) -> None:
    """Driver and CUDA versions, cuda-bindings and NVRTC versions, each GPU, the cache dir."""
    from graphcert.render.console import print_json
    from graphcert.render.env import env_view
    from graphcert.run.environment import machine_facts

    env = machine_facts(require_gpu=require_gpu)
    if as_json:
        print_json(json.dumps(env, indent=2))
        return
    console = invocation().out
    for item in env_view(env):
        console.print(item)
