"""`graphcert workloads`: list the built-in workloads. Reads the registry only: no CUDA."""

from __future__ import annotations

import click

from graphcert.commands._options import invocation


@click.command("workloads")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def command(as_json: bool) -> None:
    """List the built-in workloads: name, what each does, the kernel sources it compiles.

    \b
    Your own workload is named where a command takes one: path/file.py:NAME
    or package.module:NAME, with constructor options in brackets
    (chain[kernels=1000], "w.py:MyWorkload[a=0.5]"). It is a class, or an
    instance, with:
      name, description, kernel_files  strings (kernel_files may be ())
      setup(ctx, capacity)    allocate for the class (ctx.alloc, ctx.upload),
                              fill inputs, compile (ctx.kernel), warm up
      record(stream, n)       enqueue everything on `stream`: it is captured,
                              so no allocation and no synchronisation
      outputs(n)              {name: numpy array} after the run
      reference(n)            the same names, computed with numpy
      teardown()              free what setup allocated
    and optionally predict, size_params, tolerance, build, bytes_needed.
    Size launches by `capacity` and pass the true n as a kernel argument,
    so every n of a class gives the same graph. The whole protocol:
    python -m pydoc graphcert.workloads.base; worked examples: the
    built-ins (graphcert/workloads/) and examples/ in graphcert's repository.
    """
    import json

    from graphcert.render.console import print_json
    from graphcert.workloadref import BUILTINS

    specs = list(BUILTINS.values())
    if as_json:
        rows = [{"name": s.name, "description": s.description,
                 "kernel_files": list(s.kernel_files)} for s in specs]
        print_json(json.dumps({"workloads": rows}, indent=2))
        return

    from graphcert.render.env import workloads_table

    invocation().out.print(workloads_table(specs))
