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

from graphcert.cuda.snapshot import dot_conditional
from graphcert.model import diff_snapshots, load_snapshot, snapshot_from_raw
from graphcert.render.inventory import render_diff, render_inventory

HERE = Path(__file__).parent
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
    attrs, (body,) = dot_conditional(dot, 0x3E27AFA0)
    assert attrs == {"type": "while", "size": 1, "bodies_read": "dot"}
    snap = snapshot_from_raw(body)
    assert [(n.kind.value, n.attrs["name"], n.attrs["grid"]) for n in snap.nodes] == [
        ("kernel", "t_countdown", [1, 1, 1])]
    assert dot_conditional(dot, 0x1234) == ({"type": None, "size": None, "bodies_read": None},
                                            ())
