"""`graphcert workloads`: list the built-in workloads. Reads the registry only: no CUDA."""

from __future__ import annotations

import click


@click.command("workloads")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def command(as_json: bool) -> None:
    """List the built-in workloads: name, what each does, the kernel sources it compiles.

    A user workload is given as path/file.py:NAME or package.module:NAME instead, with
    constructor options in brackets: chain[kernels=1000], join[arity=2].
    """
    import json

    from graphcert.render.console import print_json, stdout_console
    from graphcert.workloads.registry import BUILTINS

    specs = list(BUILTINS.values())
    if as_json:
        rows = [{"name": s.name, "description": s.description,
                 "kernel_files": list(s.kernel_files)} for s in specs]
        print_json(json.dumps({"workloads": rows}, indent=2))
        return

    from graphcert.render.env import workloads_table

    stdout_console().print(workloads_table(specs))
