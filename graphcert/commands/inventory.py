"""`graphcert inventory TARGET`: every node of a saved snapshot or of a workload's graph.

Only click and pure graphcert modules at the top: `inventory FILE.json` must start fast and
run on machines without CUDA. Capturing a workload imports graphcert.run.capture in the body.
"""

from __future__ import annotations

import json

import click

from graphcert.commands._options import invocation, single_device_option
from graphcert.errors import InputError
from graphcert.model import GraphSnapshot, load_snapshot, snapshot_to_json


def _is_snapshot_file(target: str) -> bool:
    return target.lower().endswith(".json")


@click.command("inventory")
@click.argument("target")
@click.option("--size", "-n", "size_text", default=None,
              help="Work size n to capture (workload targets only), e.g. 65536 or 2^16: a "
                   "workload is set up for n's class (n rounded up to a power of two) and "
                   "records n; a framework step is captured at n itself.")
@single_device_option
@click.option("--json", "as_json", is_flag=True, help="Print the snapshot as JSON.")
@click.option("--tree", is_flag=True, help="Show nodes as a tree with child graphs nested.")
def command(target: str, size_text: str | None, device: int | None, as_json: bool,
            tree: bool) -> None:
    """Show every node of a graph: kind, kernel or operation, launch shape, bytes, deps.

    TARGET is a saved snapshot (SNAPSHOT.json, needs no GPU) or a workload to capture.
    """
    from graphcert.buckets import parse_size
    from graphcert.render.console import print_json
    from graphcert.render.inventory import render_inventory

    if as_json and tree:  # the JSON already nests child graphs; a tree is a terminal view
        raise InputError("--json and --tree do not combine: the JSON document already nests "
                         "child graphs", hint="drop --tree for JSON, or --json for the tree")
    size = None if size_text is None else parse_size(size_text)
    snapshot: GraphSnapshot
    if _is_snapshot_file(target):
        if size is not None:
            raise InputError(f"--size applies to a workload, not to the snapshot file {target}")
        snapshot = load_snapshot(target)
    else:
        snapshot = _capture(target, size, device)

    if as_json:
        print_json(json.dumps(snapshot_to_json(snapshot), indent=2, ensure_ascii=False))
        return
    render_inventory(invocation().out, snapshot, tree=tree)


def _capture(target: str, size: int | None, device: int | None) -> GraphSnapshot:
    """Capture the workload `target` once and read its graph (needs a GPU)."""
    _gpu_first(target)
    if size is None:
        raise InputError(f"{target!r} is not a snapshot file (*.json), so it names a workload, "
                         "which needs a size", hint="add --size N")
    from graphcert.workloads.registry import load

    load(target)  # a bad reference fails here, before the driver is touched
    import graphcert.run.capture as capture

    snapshot: GraphSnapshot = capture.capture_snapshot(target, size=size, mode="global",
                                                       device=invocation().device(device))
    return snapshot


def _gpu_first(target: str) -> None:
    """A workload target is captured on a GPU: without one nothing else about it can work,
    so that is said first (exit 3), not after a missing --size or reference is fixed."""
    from graphcert.errors import NoDriverError
    from graphcert.run.fleet import list_gpus

    try:
        found = list_gpus()
    except NoDriverError as exc:
        raise NoDriverError(f"{target!r} is not a snapshot file (*.json), so it names a "
                            f"workload to capture on a GPU: {exc.message}") from None
    if not found:
        raise NoDriverError(f"{target!r} names a workload to capture on a GPU, and the driver "
                            "shows none", hint="inventory of a saved SNAPSHOT.json needs none")
