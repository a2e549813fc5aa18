"""`graphcert report PATH... -o report.html`: one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from graphcert.commands._gatecall import gate_inputs, run_the_gate
from graphcert.commands._options import PathParam


@click.command("report")
@click.argument("paths", nargs=-1, required=True, type=PathParam(path_type=Path))
@click.option("-o", "--output", type=PathParam(path_type=Path, dir_okay=False),
              default=Path("report.html"), show_default=True,
              help="The HTML file to write; a missing folder on its way is created, and "
                   "stderr names it.")
@gate_inputs
@click.pass_context
def command(ctx: click.Context, paths: tuple[Path, ...], output: Path, baseline: Path | None,
            policy_file: Path | None, require_signature: bool,
            signing_key_file: Path | None) -> None:
    """Write one HTML file (no network needed to view it) with the gate verdict, a table of
    every certificate, and per workload its classes, transitions, timings, a sweep plot
    when the certificates form one, and a picture of each graph snapshot found under PATHS
    (inline SVG where Graphviz's `dot` is installed). Needs no GPU.

    The verdict is the one `graphcert gate` gives for the same PATHS and options (one gate
    call). Exit 0 once the page is written, whatever that verdict (the gate exits by it);
    2 on unusable input (stale, tampered or unsigned certificates, a bad policy, key or
    path), each named on stderr, with no page written."""
    from graphcert.fileio import check_output_file, write_output
    from graphcert.render.htmlpage import report_page
    from graphcert.render.inventory import plural

    check_output_file(output, "-o")  # before any work: a bad path is exit 2, not a traceback
    _regular_inputs(paths)
    # the gate's own call with the gate's inputs: the page's verdict is the gate's
    run = run_the_gate(ctx, paths, baseline=baseline, policy_file=policy_file,
                       require_signature=require_signature, signing_key_file=signing_key_file)
    report = run.report
    page = report_page(run, paths, baseline)
    created = write_output(output, page.html, "-o")
    if created is not None:
        click.echo(f"graphcert: created the folder {created} for {output}", err=True)
    click.echo(f"report: {output} ({plural(page.certificates, 'certificate')}, "
               f"{plural(page.graphs, 'graph')}; gate {report.status.value.upper()})", err=True)


def _regular_inputs(paths: tuple[Path, ...]) -> None:
    """The report reads each input more than once (the gate reads the certificates, the page
    looks for snapshots among the same files): a FIFO or device (which gate takes) would be
    empty the second time, so it is refused up front."""
    import os

    from graphcert.errors import InputError
    from graphcert.fileread import is_stream, kind_of, shown

    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError):
            continue  # the gate names a missing path
        if is_stream(mode):
            raise InputError(f"{shown(path)} is {kind_of(mode)}: the report reads its inputs "
                             f"more than once", hint="save it to a regular file first")
