"""`graphcert diff A B`: compare two certificates, or two graph snapshots."""

from __future__ import annotations

from pathlib import Path

import click

from graphcert.commands._options import PathParam


@click.command("diff")
@click.argument("a", type=PathParam(path_type=Path))
@click.argument("b", type=PathParam(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def command(a: Path, b: Path, as_json: bool) -> None:
    """Compare B against A: two certificates of one kind (class by class hashes and node
    counts, timing by timing like nvbench-compare), or two snapshots (node by node)."""
    import json

    from graphcert.cert.compare import diff_certificates
    from graphcert.cert.store import check_document, is_snapshot, read_document
    from graphcert.errors import InputError
    from graphcert.gate import display_path
    from graphcert.render.certview import diff_renderables
    from graphcert.render.console import print_json, stdout_console
    from graphcert.render.sanitize import clean_value

    doc_a, doc_b = read_document(a), read_document(b)
    if is_snapshot(doc_a) and is_snapshot(doc_b):
        _diff_snapshots((a, doc_a), (b, doc_b), as_json)
        return
    if is_snapshot(doc_a) or is_snapshot(doc_b):
        snap, other = (a, b) if is_snapshot(doc_a) else (b, a)
        raise InputError(f"{snap} is a graph snapshot and {other} is not",
                         hint="diff two snapshots or two certificates")
    cert_a = check_document(doc_a, a, digest_of=None)
    cert_b = check_document(doc_b, b, digest_of=None)
    diff = diff_certificates(cert_a, cert_b)  # before the warning: a refusal is one line
    names = (cert_a.workload.name, cert_b.workload.name)
    if names[0] != names[1]:  # allowed (a renamed workload), but never silently
        click.echo(f"graphcert: warning: these certificates are of different workloads "
                   f"({display_path(a)}: {names[0]}, {display_path(b)}: {names[1]}); "
                   "the comparison below is across workloads", err=True)
    if as_json:
        print_json(json.dumps({"a": display_path(a), "b": display_path(b), **diff.to_dict()},
                              indent=2, ensure_ascii=False))
        return
    console = stdout_console()
    for item in diff_renderables(clean_value(diff), display_path(a), display_path(b)):
        console.print(item)


def _diff_snapshots(a: tuple[Path, object], b: tuple[Path, object], as_json: bool) -> None:
    """Node by node, through the snapshot model and the inventory renderer. Each side is a
    path and its document, read once (a FIFO named here has nothing left a second time)."""
    import json

    from graphcert.model import diff_snapshots, snapshot_from_json
    from graphcert.render.console import print_json, stdout_console
    from graphcert.render.diff import render_diff

    snap_a, snap_b = (snapshot_from_json(doc, source=str(path)) for path, doc in (a, b))
    diff = diff_snapshots(snap_a, snap_b)
    if as_json:
        print_json(json.dumps(diff.to_dict(), indent=2, ensure_ascii=False, default=str))
        return
    render_diff(stdout_console(), diff)  # table (if any difference), then summary
