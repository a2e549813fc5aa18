"""Rendering of snapshots and diffs, compared exactly with golden files under tests/golden/.

The snapshot is synthetic (kernel names k_*), built in code. To regenerate the goldens after
an intended change: GRAPHCERT_UPDATE_GOLDEN=1 pytest tests/render/test_inventory_render.py, then
read every changed file before committing it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from graphcert.model import (
    GraphSnapshot,
    NodeKind,
    RawGraph,
    RawNode,
    diff_snapshots,
    snapshot_from_json,
    snapshot_from_raw,
    snapshot_to_json,
)
from graphcert.render import diff as render_diff_module
from graphcert.render import inventory
from graphcert.render.diff import render_diff
from graphcert.render.inventory import (
    format_bytes,
    format_dim,
    inventory_table,
    inventory_tree,
    operation,
    render_inventory,
)
from tests._golden import check_golden as golden

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
K = NodeKind


def kern(i: int, name: str, grid: int = 1, block: int = 256, smem: int = 0,
         params: tuple[int, ...] = (8,)) -> RawNode:
    return RawNode(i, K.KERNEL, {"name": name, "grid": [grid, 1, 1], "block": [block, 1, 1],
                                 "shared_mem_bytes": smem, "param_sizes": list(params),
                                 "cooperative": False, "cluster_dim": None, "priority": None})


def example_raw(grid: int = 4, value: int = 0, block: int = 256, child_name: str = "k_child_b",
                with_k_c: bool = True) -> RawGraph:
    """A synthetic graph with most node kinds, a child graph and a conditional body."""
    child = RawGraph((kern(1, "k_child_a", 2, 64), kern(2, child_name, 2, 64)), ((1, 2),))
    body = RawGraph((kern(7, "k_body", 1, 32),), ())
    nodes = [
        RawNode(10, K.MEMSET, {"element_size": 4, "width": 1024, "height": 1, "value": value,
                               "bytes": 4096}),
        kern(11, "k_a", grid, block, 1024, (8, 8, 4)),
        kern(12, "k_b", grid, block),
        RawNode(14, K.MEMCPY, {"direction": "DtoH", "width_bytes": 4096, "height": 1,
                               "depth": 1, "bytes": 4096}),
        RawNode(15, K.GRAPH, {}, (child,)),
        RawNode(16, K.CONDITIONAL, {"type": "while", "size": 1}, (body,)),
        RawNode(17, K.EVENT_RECORD, {}),
        RawNode(18, K.MEM_ALLOC, {"bytes": 1 << 20}),
        RawNode(19, K.MEM_FREE, {}),
        RawNode(20, K.HOST, {}),
        RawNode(21, K.EMPTY, {}),
    ]
    edges = [(18, 10), (10, 11), (11, 12), (12, 21), (21, 14), (14, 15), (15, 16), (16, 17),
             (17, 20), (20, 19)]
    if with_k_c:
        nodes.append(kern(13, "k_c", 1, 32))
        edges += [(11, 13), (13, 21)]
    return RawGraph(tuple(nodes), tuple(edges))


def example_snapshot(**kw: Any) -> GraphSnapshot:
    return snapshot_from_raw(example_raw(**kw), meta={"workload": "synthetic-example",
                                                      "capacity": 1024, "n": 1000})


def rendered(draw: Callable[[Console], None]) -> str:
    """What a pinned console shows: width 120, no colour, not a terminal."""
    console = Console(width=120, color_system=None, force_terminal=False, record=True,
                      file=io.StringIO())
    draw(console)
    text = console.export_text()
    # Trailing blanks are rich's cell padding; editors strip them, so goldens do not keep them.
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def check_golden(name: str, text: str) -> None:
    golden(GOLDEN / name, text)


def test_snapshot_json_golden() -> None:
    """Pins the JSON layout and the fingerprint algorithm: a change here invalidates every
    saved snapshot, so it needs a schema_version bump."""
    doc = snapshot_to_json(example_snapshot())
    check_golden("example_snapshot.json", json.dumps(doc, indent=2) + "\n")
    saved = json.loads((GOLDEN / "example_snapshot.json").read_text())
    assert snapshot_from_json(saved) == example_snapshot()


def test_inventory_table_golden() -> None:
    check_golden("inventory_table.txt",
                 rendered(lambda c: render_inventory(c, example_snapshot())))


def test_large_graphs_get_the_same_layout_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past LARGE_TABLE_ROWS the table is padded by hand; it must look the same."""
    monkeypatch.setattr(inventory, "LARGE_TABLE_ROWS", 0)
    assert rendered(lambda c: render_inventory(c, example_snapshot())) == (
        GOLDEN / "inventory_table.txt").read_text(encoding="utf-8")


def test_inventory_tree_golden() -> None:
    check_golden("inventory_tree.txt",
                 rendered(lambda c: render_inventory(c, example_snapshot(), tree=True)))


def test_diff_launch_shape_golden() -> None:
    d = diff_snapshots(example_snapshot(), example_snapshot(grid=8, value=7, block=128))
    assert d.summary() == "launch shape"
    check_golden("diff_launch_shape.txt", rendered(lambda c: render_diff(c, d)))


def test_diff_topology_golden() -> None:
    d = diff_snapshots(example_snapshot(), example_snapshot(with_k_c=False,
                                                            child_name="k_child_z"))
    assert d.summary() == "topology"
    check_golden("diff_topology.txt", rendered(lambda c: render_diff(c, d)))


@pytest.mark.parametrize("golden", ["diff_launch_shape.txt", "diff_topology.txt"])
def test_large_diffs_get_the_same_layout(monkeypatch: pytest.MonkeyPatch, golden: str) -> None:
    """Past LARGE_TABLE_ROWS the diff table is padded by hand; it must look the same."""
    monkeypatch.setattr(render_diff_module, "LARGE_TABLE_ROWS", 0)
    other = (example_snapshot(grid=8, value=7, block=128) if golden == "diff_launch_shape.txt"
             else example_snapshot(with_k_c=False, child_name="k_child_z"))
    d = diff_snapshots(example_snapshot(), other)
    assert rendered(lambda c: render_diff(c, d)) == (GOLDEN / golden).read_text(encoding="utf-8")


def test_a_diff_past_the_large_table_rows_is_padded_by_hand_and_ends_no_line_in_spaces(
        ) -> None:
    """5,000 changed fields, past LARGE_TABLE_ROWS: the hand-padded table, one row each.
    How long printing 1e5 of them takes (a rich Table: 0.5 ms a row): fanout_speed.py."""
    n = 5_000
    assert n > render_diff_module.LARGE_TABLE_ROWS
    edges = tuple((i, i + 1) for i in range(n - 1))
    a = snapshot_from_raw(RawGraph(tuple(kern(i, "k_step") for i in range(n)), edges))
    b = snapshot_from_raw(RawGraph(tuple(kern(i, "k_step", grid=2) for i in range(n)), edges))
    d = diff_snapshots(a, b)
    out = io.StringIO()
    console = Console(width=120, color_system=None, force_terminal=False, file=out)
    render_diff(console, d)
    lines = out.getvalue().splitlines()
    assert len(lines) == n + 3 and lines[2].split() == ["0", "0", "changed", "grid", "1x1x1",
                                                        "2x1x1"]
    assert lines[-2].split() == [str(n - 1), str(n - 1), "changed", "grid", "1x1x1", "2x1x1"]
    assert all(line == line.rstrip() for line in lines)  # piped tables end no line in spaces


def test_diff_lines_and_dict() -> None:
    d = diff_snapshots(example_snapshot(), example_snapshot(with_k_c=False,
                                                            child_name="k_child_z"))
    assert d.summary_lines() == ["removed 4 kernel k_c", '5->4: deps [3, "a4 (removed)"] -> [3]',
                                 "removed 7.1 kernel k_child_b", "added 6.1 kernel k_child_z"]
    doc = json.loads(json.dumps(d.to_dict()))
    assert doc["summary"] == "topology" and doc["removed"][0]["name"] == "k_c"
    assert doc["children"][0]["diff"]["added"][0]["name"] == "k_child_z"


def test_diff_identical() -> None:
    d = diff_snapshots(example_snapshot(), example_snapshot())
    # no bare table header: one line that says nothing differs (issue 17)
    assert rendered(lambda c: render_diff(c, d)) == (
        "no differences: same topology, launch shape and recorded fields\n")


def test_table_and_tree_objects() -> None:
    s = example_snapshot()
    table = inventory_table(s)
    assert [c.header for c in table.columns] == ["#", "kind", "kernel / operation", "grid",
                                                 "block", "smem", "bytes", "deps"]
    assert len(table.rows) == s.node_count + 3  # child graph and body nodes get rows too
    tree = inventory_tree(s)
    assert len(tree.children) == s.node_count


@pytest.mark.parametrize("n,text", [(0, "0 B"), (1023, "1023 B"), (1024, "1 KiB"),
                                    (1536, "1.5 KiB"), (1 << 20, "1 MiB"),
                                    (3 * (1 << 30), "3 GiB"), (None, "-")])
def test_format_bytes(n: int | None, text: str) -> None:
    assert format_bytes(n) == text


def test_operation_texts() -> None:
    def op(kind: NodeKind, attrs: dict[str, Any]) -> str:
        return operation(snapshot_from_raw(RawGraph((RawNode(0, kind, attrs),), ())).nodes[0])

    assert op(K.KERNEL, {"name": "k_a", "cooperative": True, "cluster_dim": [2, 1, 1]}) == (
        "k_a [cooperative, cluster 2x1x1]")
    assert op(K.KERNEL, {}) == "(unnamed kernel)"
    assert op(K.MEMSET, {"value": 0, "element_size": 4}) == "memset value=0 elem=4B"
    assert op(K.MEMCPY, {"direction": "HtoD"}) == "memcpy HtoD"
    assert op(K.CONDITIONAL, {"type": "if", "size": 2}) == "conditional if (2 bodies, not read)"
    assert op(K.CONDITIONAL, {"type": None}) == "conditional (type unknown) (bodies not read)"
    assert op(K.EXT_SEMAS_WAIT, {"count": 2}) == "wait on 2 external semaphores"
    assert op(K.BATCH_MEM_OP, {"count": 3}) == "batch of 3 memory ops"
    assert op(K.UNKNOWN, {"driver_type": 14}) == "unknown node type 14"
    assert op(K.EVENT_WAIT, {}) == "wait for event"
    assert format_dim([8, 1, 1]) == "8x1x1" and format_dim(None) == "-"
