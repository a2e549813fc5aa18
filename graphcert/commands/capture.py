"""`graphcert capture`: snapshot JSON and DOT per capacity class, and what capture cost."""

from __future__ import annotations

import json
from pathlib import Path

import click

from graphcert.commands._options import device_option, json_option


@click.command("capture")
@click.argument("workload")
@click.option("--size", "size", help="Capture one size N (its class is N rounded up to 2^k).")
@click.option("--classes", "classes", help="Capture each class in LO..HI, or each bucket of a list "
              "(1,2,4,8 or vllm:MAX / sglang:MAX), at its capacity.")
@click.option("--mode", type=click.Choice(["global", "thread-local", "relaxed"]),
              default="global", show_default=True, help="Stream capture mode.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("reports"), show_default=True, help="Where snapshots go.")
@device_option
@json_option
def command(workload: str, size: str | None, classes: str | None, mode: str, out_dir: Path,
            device: int, as_json: bool) -> None:
    """Capture WORKLOAD, instantiate it, and write a snapshot and DOT per class (plus SVG
    when Graphviz's `dot` is installed). WORKLOAD is a built-in name, path/file.py:NAME or
    package.module:NAME."""
    from graphcert.classes import class_of, parse_buckets, parse_size
    from graphcert.errors import InputError
    from graphcert.fileio import ensure_writable_dir

    if size is not None and classes is not None:
        raise InputError("give --size or --classes, not both")
    buckets = parse_buckets(classes) if classes is not None else None
    sizes = (list(buckets) if buckets is not None
             else [parse_size(size if size is not None else 1024)])
    capacity_of = buckets.capacity_of if buckets is not None else class_of
    ensure_writable_dir(out_dir)
    from graphcert.workloads.registry import load

    loaded = load(workload)  # a bad reference fails here, before any GPU work

    from graphcert.cuda.context import RunContext
    from graphcert.render.console import print_json, stderr_console, stdout_console
    from graphcert.run.capture import capture_sizes, write_outputs
    from graphcert.run.session import WorkloadSession

    rows = []
    with RunContext.open(device) as ctx:
        session = WorkloadSession(ctx, workload, loaded)
        for n in sizes:  # refuse a class that cannot fit before capturing anything
            shortfall = session.memory_shortfall(capacity_of(n))
            if shortfall:
                raise InputError(shortfall, hint="use a smaller --size or --classes range")
        for result in capture_sizes(session, sizes, mode, capacity_of):
            files = write_outputs(result, out_dir, session.name)
            rows.append({**result.cost(), "files": [str(f) for f in files]})
    from graphcert.render.graphviz import dot_path, note_missing_dot

    if dot_path() is None:  # write_outputs skipped the SVGs: say why, once
        note_missing_dot()
    if as_json:
        print_json(json.dumps({"workload": workload, "mode": mode, "classes": rows}, indent=2))
        return
    from rich.table import Table

    table = Table(title=f"capture {workload} ({mode} mode)")
    for col in ("class", "n", "nodes", "capture", "instantiate", "upload", "device memory",
                "graph mem reserved", "topology"):
        table.add_column(col, justify="right" if col not in ("topology",) else "left")
    for r in rows:
        table.add_row(f"{r['capacity']:,}", f"{r['n']:,}", str(r["nodes"]),
                      f"{r['capture_s'] * 1e3:.2f} ms", f"{r['instantiate_s'] * 1e3:.2f} ms",
                      f"{r['upload_s'] * 1e3:.2f} ms",
                      f"{r['device_memory_bytes'] / 2**20:.1f} MiB",
                      f"{r['graph_memory']['reserved_current'] / 2**20:.1f} MiB",
                      r["topology_hash"][:12])
    stdout_console().print(table)
    total = sum(r["capture_s"] + r["instantiate_s"] for r in rows)
    mem = sum(r["device_memory_bytes"] for r in rows)
    stderr_console().print(f"capturing {len(rows)} class(es) took {total:.3f} s and "
                           f"{mem / 2**30:.3f} GiB; files in {out_dir}/")
