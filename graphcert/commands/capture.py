"""`graphcert capture`: snapshot JSON and DOT per capacity class, and what capture cost."""

from __future__ import annotations

import json
from pathlib import Path

import click

from graphcert.commands._fleet import fleet_capable
from graphcert.commands._options import PathParam, device_option, invocation, json_option


@click.command("capture")
@click.argument("workload")
@click.option("--size", "size", help="Capture one size N at its class, N rounded up to 2^k "
              "(default without --classes: 1024).")
@click.option("--classes", "classes", help="Capture each class in LO..HI, or each bucket of a list "
              "(1,2,4,8 or vllm:MAX / sglang:MAX), at its capacity.")
@click.option("--mode", type=click.Choice(["global", "thread-local", "relaxed"]),
              default="global", show_default=True, help="Stream capture mode.")
@click.option("--out", "out_dir", type=PathParam(file_okay=False, path_type=Path),
              default=Path("reports"), show_default=True, help="Where snapshots go.")
@device_option
@json_option
@fleet_capable("capture")
def command(workload: str, size: str | None, classes: str | None, mode: str, out_dir: Path,
            device: int, as_json: bool) -> None:
    """Capture WORKLOAD, instantiate it, and write a snapshot and DOT per class (plus SVG
    when Graphviz's `dot` is installed). WORKLOAD is a built-in name, path/file.py:NAME or
    package.module:NAME."""
    from graphcert.buckets import parse_buckets, parse_size
    from graphcert.errors import InputError

    if size is not None and classes is not None:
        raise InputError("give --size or --classes, not both")
    buckets = parse_buckets(classes) if classes is not None else None
    sizes = (list(buckets) if buckets is not None
             else [parse_size(size if size is not None else 1024)])

    from graphcert.render.capture import capture_summary, capture_table
    from graphcert.render.console import print_json
    from graphcert.run.jobs import capture_workload

    rows = capture_workload(workload, sizes, mode=mode, device=device, out_dir=out_dir,
                            capacity_of=buckets.capacity_of if buckets is not None else None)
    from graphcert.render.graphviz import dot_path, note_missing_dot

    if dot_path() is None:  # the SVGs were skipped: say why, once
        note_missing_dot()
    if as_json:
        print_json(json.dumps({"workload": workload, "mode": mode,
                               "classes": [r.to_json() for r in rows]}, indent=2))
        return
    invocation().out.print(capture_table(workload, mode, rows))
    invocation().err.print(capture_summary(rows, str(out_dir)))
