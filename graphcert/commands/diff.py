"""`graphcert diff A B`: compare two certificates, or two graph snapshots."""

from __future__ import annotations

from pathlib import Path

import click

from graphcert.commands._options import PathParam, invocation


@click.command("diff")
@click.argument("a", type=PathParam(path_type=Path))
@click.argument("b", type=PathParam(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--exit-zero", is_flag=True,
              help="Exit 0 when the graphs differ too (2 still means bad input).")
@click.pass_context
def command(ctx: click.Context, a: Path, b: Path, as_json: bool, exit_zero: bool) -> None:
    """Compare B against A: two certificates of one kind (class by class hashes and node
    counts, timing by timing like nvbench-compare), or two snapshots (node by node).

    \b
    Exit codes (as `cmp` and `git diff --exit-code`):
      0  the graphs are the same (snapshots: equal topology and launch
         shape; topology certificates: every class the same); always
         for two bench certificates (timings are compared, not matched)
      1  the graphs differ: a topology or launch-shape change, a class
         in one only or without a hash (--exit-zero: 0)
      2  bad input: a file unreadable, corrupt or tampered, or two of
         different kinds

    Kernel parameter values alone (they change with n) are shown, never a difference.
    Bench certificates of two GPU models are compared with a warning: the gate compares
    timings per GPU model, never across models."""
    import json

    from graphcert.cert.compare import diff_certificates
    from graphcert.cert.store import check_document, is_snapshot, read_document
    from graphcert.errors import ExitStatus, InputError
    from graphcert.gate import display_path
    from graphcert.render.certview import diff_renderables
    from graphcert.render.console import print_json
    from graphcert.render.sanitize import clean_value

    doc_a, doc_b = read_document(a), read_document(b)
    if is_snapshot(doc_a) and is_snapshot(doc_b):
        differ = _diff_snapshots((a, doc_a), (b, doc_b), as_json)
    elif is_snapshot(doc_a) or is_snapshot(doc_b):
        snap, other = (a, b) if is_snapshot(doc_a) else (b, a)
        raise InputError(f"{snap} is a graph snapshot and {other} is not",
                         hint="diff two snapshots or two certificates")
    else:
        cert_a = check_document(doc_a, a, digest_of=None)
        cert_b = check_document(doc_b, b, digest_of=None)
        diff = clean_value(diff_certificates(cert_a, cert_b))  # a refusal is one line
        for warning in diff.warnings:
            click.echo(f"graphcert: warning: {warning}", err=True)
        if as_json:
            print_json(json.dumps({"a": display_path(a), "b": display_path(b),
                                   **diff.to_dict()}, indent=2, ensure_ascii=False))
        else:
            console = invocation().out
            for item in diff_renderables(diff, display_path(a), display_path(b)):
                console.print(item)
        differ = diff.graphs_differ
    # 1 means "they differ", as cmp says it (ExitStatus.FAILED is 1)
    ctx.exit(ExitStatus.FAILED if differ and not exit_zero else ExitStatus.OK)


def _diff_snapshots(a: tuple[Path, object], b: tuple[Path, object], as_json: bool) -> bool:
    """Node by node, through the snapshot model and the inventory renderer. Each side is a
    path and its document, read once (a FIFO named here has nothing left a second time).
    True when the graphs differ."""
    import json

    from graphcert.cert.compare import snapshots_differ
    from graphcert.model import diff_snapshots, snapshot_from_json
    from graphcert.render.console import print_json
    from graphcert.render.diff import render_diff

    snap_a, snap_b = (snapshot_from_json(doc, source=str(path)) for path, doc in (a, b))
    diff = diff_snapshots(snap_a, snap_b)
    if as_json:
        print_json(json.dumps(diff.to_dict(), indent=2, ensure_ascii=False, default=str))
    else:
        render_diff(invocation().out, diff)  # table (if any difference), then summary
    return snapshots_differ(diff)
