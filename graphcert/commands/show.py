"""`graphcert show CERT`: render one certificate (any machine, no GPU)."""

from __future__ import annotations

from pathlib import Path

import click

from graphcert.commands._options import PathParam, invocation


@click.command("show")
@click.argument("cert", type=PathParam(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the certificate as JSON.")
def command(cert: Path, as_json: bool) -> None:
    """Render the certificate CERT: environment, verdict and results (a graph snapshot's
    nodes are shown by `graphcert inventory SNAPSHOT.json`).

    The certificate is checked (JSON, digest, schema version, fields); a stale one is shown
    with its staleness, not refused. Exit 2 when it cannot be trusted.
    """
    import json

    from graphcert.cert.store import check_document, is_snapshot, read_document, staleness
    from graphcert.errors import InputError
    from graphcert.gate import display_path
    from graphcert.render.certview import show_renderables
    from graphcert.render.console import print_json
    from graphcert.render.sanitize import clean_value
    from graphcert.workloadref import method_digest, source_digest

    doc = read_document(cert)
    if is_snapshot(doc):  # a snapshot is shown by inventory, not compared
        raise InputError(f"{display_path(cert)} is a graph snapshot, not a certificate",
                         hint=f"show its nodes with graphcert inventory {display_path(cert)}")
    loaded = check_document(doc, cert)
    if as_json:  # the certificate itself, as read (not the typed value written back)
        print_json(json.dumps(loaded.document, indent=2, ensure_ascii=False))
        return
    console = invocation().out
    shown = staleness(loaded, source_digest, method_digest)
    for item in show_renderables(clean_value(loaded), display_path(cert), shown):
        console.print(item)
