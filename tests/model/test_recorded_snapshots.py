"""Snapshots recorded on a GPU (tests/fixtures/snapshots/, see the README there): loading
recomputes both fingerprints; rendering and class-to-class diffs match golden files exactly.

Regenerate the goldens after an intended change with GRAPHCERT_UPDATE_GOLDEN=1, then read
every changed file before committing it.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from graphcert.cuda.snapshot import READERS
from graphcert.model import KINDS, NodeKind, diff_snapshots, load_snapshot, snapshot_from_raw
from graphcert.model.dotread import NOT_IN_DOT, dot_conditional, parse_dot
from graphcert.render.diff import render_diff
from graphcert.render.inventory import render_inventory

HERE = Path(__file__).resolve().parents[1]
SNAPS = HERE / "fixtures" / "snapshots"
GOLDEN = HERE / "golden" / "fixtures"
WORKLOADS = ["chain", "converge", "decode", "fixpoint", "join", "resident", "scan"]
CLASSES = [256, 512, 1024]


def _console() -> Console:
    return Console(file=io.StringIO(), width=140, color_system=None, force_terminal=False,
                   record=True)


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("GRAPHCERT_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{name} differs from its golden file"


def test_every_builtin_recorded_at_three_classes() -> None:
    found = sorted(p.name for p in SNAPS.glob("*.snapshot.json"))
    assert found == sorted(f"{w}-c{c}.snapshot.json" for w in WORKLOADS for c in CLASSES)


@pytest.mark.parametrize("workload", WORKLOADS)
def test_render_and_diff_match_golden(workload: str) -> None:
    snaps = [load_snapshot(SNAPS / f"{workload}-c{c}.snapshot.json") for c in CLASSES]
    for cap, snap in zip(CLASSES, snaps, strict=True):
        assert snap.meta["capacity"] == cap and snap.meta["name"] == workload
        console = _console()
        render_inventory(console, snap)
        render_inventory(console, snap, tree=True)
        _golden(f"{workload}-c{cap}.txt", console.export_text())
    console = _console()
    for a, b in zip(snaps, snaps[1:], strict=False):
        render_diff(console, diff_snapshots(a, b))
    _golden(f"{workload}-diffs.txt", console.export_text())


# What must change between classes 256 -> 512 -> 1024, from each workload's design.
TRANSITIONS = {
    "chain": ["parameters only", "parameters only"],  # N empty kernels, n unused
    "scan": ["topology", "parameters only"],  # 512 adds a level; a CTA covers 2,048
    "resident": ["launch shape", "launch shape"],  # copy sizes and grid follow capacity
}


@pytest.mark.parametrize("workload", sorted(TRANSITIONS))
def test_class_transitions(workload: str) -> None:
    snaps = [load_snapshot(SNAPS / f"{workload}-c{c}.snapshot.json") for c in CLASSES]
    got = [diff_snapshots(a, b).summary() for a, b in zip(snaps, snaps[1:], strict=False)]
    assert got == TRANSITIONS[workload]


def test_recorded_node_kinds() -> None:
    counts = {w: load_snapshot(SNAPS / f"{w}-c1024.snapshot.json").counts() for w in WORKLOADS}
    assert counts["resident"] == {"kernel": 1, "memcpy": 2, "memset": 1}
    assert counts["converge"]["conditional"] == 1
    assert counts["scan"] == {"kernel": 3}
    assert counts["chain"] == {"kernel": 16}


def test_conditional_read_from_recorded_dot() -> None:
    dot = (HERE / "fixtures" / "dot" / "conditional_while.dot").read_text()
    node, attrs = dot_conditional(dot, 0x3E27AFA0)
    assert node is not None and node.handle == 0x3E27AFA0
    assert attrs == {"type": "while", "size": 1, "bodies_read": "dot"}
    (body,) = node.children
    assert [n.handle for n in body.nodes] == [0x3E27B708]
    snap = snapshot_from_raw(body.raw())
    (kernel,) = snap.nodes
    assert {k: kernel.attrs[k] for k in ("name", "grid", "block", "shared_mem_bytes",
                                          "cooperative", "priority")} == {
        "name": "t_countdown", "grid": [1, 1, 1], "block": [1, 1, 1], "shared_mem_bytes": 0,
        "cooperative": False, "priority": 0}
    # What the DOT cannot show is marked, not dropped.
    assert kernel.attrs["unread"] == {"param_sizes": NOT_IN_DOT, "cluster_dim": NOT_IN_DOT}
    missing, why = dot_conditional(dot, 0x1234)
    assert missing is None and why["type"] is None and "not found" in why["unread"]["type"]


def test_nested_bodies_with_a_child_graph_node_parse_from_the_dot() -> None:
    """A WHILE body holding a child graph and a nested WHILE (recorded on an H100, see the
    fixtures README): the driver prints a child-graph node as plain lines, not a record."""
    dot = (HERE / "fixtures" / "dot" / "nested_child_while.dot").read_text()
    node, attrs = dot_conditional(dot, 0x20D816B8)
    assert node is not None and attrs["type"] == "while"
    (body,) = node.children
    assert [(n.index, n.kind, n.handle) for n in body.nodes] == [
        (0, NodeKind.GRAPH, 0x20D81E20), (1, NodeKind.KERNEL, 0x20D82CF0),
        (2, NodeKind.CONDITIONAL, 0x20D83458)]
    assert body.edges == ((0, 1), (0, 2))
    (child,) = body.nodes[0].children
    assert [n.attrs["name"] for n in child.nodes] == ["t_increment"]
    (inner,) = body.nodes[2].children
    assert inner.nodes[0].attrs["grid"] == [2, 1, 1]
    snap = snapshot_from_raw(body.raw())
    assert snap.counts(recursive=True) == {"kernel": 3, "graph": 1, "conditional": 1}


@pytest.mark.parametrize("workload", ["converge", "resident"])

def test_dot_gives_the_recorded_topology(workload: str) -> None:
    """Every graph of a DOT print recorded on the GPU, read from the text alone, has the topology
    fingerprint the driver path recorded, and every field it read equals the recorded one."""
    from graphcert.model import dotread

    dot = (SNAPS / f"{workload}-c1024.dot").read_text()
    recorded = load_snapshot(SNAPS / f"{workload}-c1024.snapshot.json")
    labels, clusters = parse_dot(dot)
    top = min(clusters, key=lambda name: int(name.split("_")[1]))
    snap = snapshot_from_raw(dotread._graph(dot, labels, clusters, top).raw())
    assert snap.topology_hash == recorded.topology_hash
    pairs = [(snap, recorded)]
    while pairs:
        got, want = pairs.pop()
        for g, w in zip(got.nodes, want.nodes, strict=True):
            # (the recorded bodies came from the old DOT reader, which read fewer fields)
            shown = {k: v for k, v in g.attrs.items()
                     if k not in ("unread", "bodies_read") and k in w.attrs}
            assert shown == {k: w.attrs[k] for k in shown}, (g, w)
            assert set(g.attrs.get("unread", {})) <= set(KINDS[g.kind].hashed)
            pairs += list(zip(g.children, w.children, strict=True))


def test_every_kind_has_one_reader() -> None:
    assert set(READERS) == set(NodeKind) - {NodeKind.UNKNOWN}
