"""`graphcert env`: driver, CUDA and library versions, every GPU, the kernel cache."""

from __future__ import annotations

import json

import click

from graphcert.commands._options import json_option


@click.command("env")
@json_option
def command(as_json: bool) -> None:
    """Driver and CUDA versions, cuda-bindings and NVRTC versions, each GPU, the cache dir."""
    from graphcert.render.console import print_json, stdout_console
    from graphcert.render.env import env_view
    from graphcert.run.environment import machine_facts

    env = machine_facts()
    if as_json:
        print_json(json.dumps(env, indent=2))
        return
    console = stdout_console()
    for item in env_view(env):
        console.print(item)
