"""The every-kind snapshot recorded on a GPU (tests/fixtures/every_kind/, see the fixtures
README; made by tools/record_every_kind.py from tests/gpu/all_kinds.py): every node kind the
driver builds, nested bodies. Loading checks both fingerprints; inventory (table and tree),
diff, the fingerprints from scratch and the HTML picture are checked on it."""

from __future__ import annotations

import io
import random
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from graphcert.model import (
    GraphSnapshot,
    NodeKind,
    RawGraph,
    RawNode,
    diff_snapshots,
    load_snapshot,
    snapshot_from_raw,
)
from graphcert.model.dotread import dot_conditional
from graphcert.render.dot import snapshot_to_dot
from graphcert.render.inventory import render_inventory
from graphcert.render.layered import layered_svg
from tests.gpu.all_kinds import walk

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "every_kind"
SNAP = HERE / "every_kind.snapshot.json"
DOT = HERE / "every_kind.dot"
BUILT = {"kernel", "memcpy", "memset", "host", "graph", "empty", "event_wait", "event_record",
         "mem_alloc", "mem_free", "batch_mem_op", "conditional"}

pytestmark = pytest.mark.skipif(
    not SNAP.exists(), reason="every-kind snapshot not recorded yet: run "
    "tools/record_fixtures.py on a GPU and copy fixtures/every_kind/ to tests/fixtures/")


@pytest.fixture(scope="module")
def snap() -> GraphSnapshot:
    return load_snapshot(SNAP)


def test_every_buildable_kind_with_nested_bodies(snap: GraphSnapshot) -> None:
    counts = snap.counts(recursive=True)
    assert set(counts) >= BUILT and len(counts) >= 12
    conds = sorted((n.attrs["type"], n.attrs["size"]) for n in walk(snap)
                   if n.kind is NodeKind.CONDITIONAL)
    assert conds == [("if", 1), ("if", 2), ("switch", 3), ("while", 1)]
    (loop,) = [n for n in snap.nodes if n.attrs.get("type") == "while"]
    assert loop.children[0].counts() == {"kernel": 1, "conditional": 1}  # IF inside WHILE
    assert all("unread" not in n.attrs for n in walk(snap))
    assert all(isinstance(n.attrs.get("param_values"), list) for n in walk(snap)
               if n.kind is NodeKind.KERNEL)


def test_batch_mem_op_operations_recorded(snap: GraphSnapshot) -> None:
    (batch,) = [n for n in walk(snap) if n.kind is NodeKind.BATCH_MEM_OP]
    assert batch.attrs == {"count": 2, "ops": ["write_value_32", "barrier"]}


def test_inventory_table_and_tree(snap: GraphSnapshot) -> None:
    console = Console(file=io.StringIO(), width=160, color_system=None, record=True)
    render_inventory(console, snap)
    render_inventory(console, snap, tree=True)
    text = console.export_text()
    for words in ("conditional switch (3 bodies)", "conditional if (2 bodies)",
                  "batch of 2 memory ops", "allocate", "free", "record event",
                  "wait for event", "host function", "child graph", "params (", "body 2:"):
        assert words in text, words


def _raw(s: GraphSnapshot, rng: random.Random) -> RawGraph:
    ids = list(range(len(s.nodes)))
    rng.shuffle(ids)
    nodes = [RawNode(ids[n.index], n.kind, dict(n.attrs),
                     tuple(_raw(c, rng) for c in n.children)) for n in s.nodes]
    rng.shuffle(nodes)
    data = {(a, b): d for a, b, d in s.edge_data}
    return RawGraph(tuple(nodes), tuple((ids[a], ids[b], data[(a, b)]) if (a, b) in data
                                        else (ids[a], ids[b]) for a, b in s.edges))


def test_fingerprints_from_scratch(snap: GraphSnapshot) -> None:
    for seed in range(3):
        again = snapshot_from_raw(_raw(snap, random.Random(seed)))
        assert (again.topology_hash, again.shape_hash) == (snap.topology_hash, snap.shape_hash)


def test_diff_of_a_parameter_value(snap: GraphSnapshot) -> None:
    assert diff_snapshots(snap, snap).identical
    (copy,) = [n for n in snap.nodes if n.name == "t_copy_u32"]
    values = list(copy.attrs["param_values"])
    values[2] += 1024
    changed = replace(copy, attrs={**copy.attrs, "param_values": values})
    other = replace(snap, nodes=tuple(changed if n is copy else n for n in snap.nodes))
    d = diff_snapshots(snap, other)
    assert d.summary() == "parameters only"
    assert d.summary_lines() == [f"{copy.index}: parameter 2: {values[2] - 1024} -> "
                                 f"{values[2]}"]


def test_html_picture_and_dot(snap: GraphSnapshot) -> None:
    svg = layered_svg(snap, "every kind")
    assert svg is not None
    assert svg.count("<g><title>") == len(walk(snap))  # one box per node, bodies included
    assert "conditional switch (3 bodies)" in svg
    dot = snapshot_to_dot(snap)
    assert dot.count("switch") >= 1 and dot.startswith("digraph")


def test_recorded_dot_gives_the_conditionals(snap: GraphSnapshot) -> None:
    """The driver's DOT print (recorded with the snapshot) names each conditional's type
    and bodies, as the reader needs on drivers without cuGraphNodeGetParams."""
    import re

    text = DOT.read_text()
    handles = {int(h, 16) for h in re.findall(r"0x[0-9a-fA-F]+", text)}
    found = []
    for h in handles:
        node, attrs = dot_conditional(text, h)
        if node is not None:
            found.append((attrs["type"], attrs["size"]))
    assert sorted(found) == [("if", 1), ("if", 2), ("switch", 3), ("while", 1)]
