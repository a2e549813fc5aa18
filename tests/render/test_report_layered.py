"""graphcert's own drawing of a small graph (render/layered.py) and how the report picks a
picture: Graphviz's where `dot` is installed, graphcert's for up to MAX_NODES nodes without it,
else a note saying how to get one. Graphs here are synthetic (tests/_modelgraphs.py, kernel
names k_*)."""

from __future__ import annotations

import re
import shutil
import stat
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _modelgraphs import chain, fork, kern
from click.testing import CliRunner

from graphcert.cli import cli
from graphcert.model import RawGraph, save_snapshot, snapshot_from_raw
from graphcert.render import graphviz
from graphcert.render.layered import MAX_NODES, layered_svg, layers, node_total

ROOT = Path(__file__).resolve().parents[2]


def _names(snap_layers: list[list[int]], graph: RawGraph) -> list[set[str]]:
    snap = snapshot_from_raw(graph)
    by_index = {n.index: n.name for n in snap.nodes}
    return [{str(by_index[i]) for i in row} for row in snap_layers]


def test_longest_path_layers_put_a_node_below_its_deepest_dependency() -> None:
    """A diamond with a skip edge (a -> d): d sits below b and c, not beside them."""
    graph = RawGraph((kern(0, "k_a"), kern(1, "k_b"), kern(2, "k_c"), kern(3, "k_d")),
                     ((0, 1), (0, 2), (1, 3), (2, 3), (0, 3)))
    snap = snapshot_from_raw(graph)
    assert _names(layers(snap), graph) == [{"k_a"}, {"k_b", "k_c"}, {"k_d"}]


def test_a_long_chain_is_one_node_per_layer_without_recursion_limits() -> None:
    long = chain(*(kern(i, f"k_{i}") for i in range(1500)))
    rows = layers(snapshot_from_raw(long))
    assert len(rows) == 1500 and all(len(r) == 1 for r in rows)


def test_a_graph_with_a_child_is_drawn_whole_as_valid_svg() -> None:
    """fork(): memset -> k_a -> two k_x -> k_b, k_c -> a child graph of two kernels."""
    snap = snapshot_from_raw(fork())
    svg = layered_svg(snap, "synthetic fork")
    assert svg is not None and svg == layered_svg(snap, "synthetic fork")  # deterministic
    root = ET.fromstring(svg)  # well-formed, so it inlines into HTML as it is
    ns = "{http://www.w3.org/2000/svg}"
    rects = root.iter(f"{ns}rect")
    assert sum(1 for _ in rects) == 7 + 2 + 1  # the nodes, the child's two, its frame
    deps = sum(len(n.deps) for n in snap.nodes) + sum(
        len(n.deps) for node in snap.nodes for c in node.children for n in c.nodes)
    assert sum(1 for _ in root.iter(f"{ns}polygon")) == deps == 8
    for name in ("k_a", "k_x", "k_b", "k_c", "k_child", "k_child2", "memset", "graph"):
        assert name in svg, name
    assert "<script" not in svg and "href" not in svg


def test_boxes_of_one_layer_never_overlap() -> None:
    """A fan-out of five: the five boxes of the second layer sit side by side."""
    graph = RawGraph(tuple(kern(i, f"k_{i}") for i in range(6)),
                     tuple((0, i) for i in range(1, 6)))
    svg = layered_svg(snapshot_from_raw(graph), "synthetic fan-out")
    assert svg is not None
    spots = [(float(x), float(y)) for x, y in
             re.findall(r"<g transform='translate\(([\d.]+),([\d.]+)\)'><g><title>", svg)]
    widths = [float(w) for w in re.findall(r"<g><title>[^<]*</title><rect width='([\d.]+)'",
                                           svg)]
    row = sorted((x, w) for (x, y), w in zip(spots, widths, strict=True) if y > spots[0][1])
    assert len(row) == 5
    assert all(a + w <= b for (a, w), (b, _) in zip(row, row[1:], strict=False))


def test_a_graph_past_the_limit_is_not_drawn() -> None:
    big = snapshot_from_raw(chain(*(kern(i, f"k_{i}") for i in range(MAX_NODES + 1))))
    assert node_total(big) == MAX_NODES + 1 and layered_svg(big, "big") is None
    small = snapshot_from_raw(chain(*(kern(i, f"k_{i}") for i in range(MAX_NODES))))
    assert layered_svg(small, "small") is not None


def _report(tmp_path: Path, *graphs: RawGraph) -> tuple[str, str]:
    """`graphcert report` of the scan certificates and these synthetic snapshots."""
    work = tmp_path / "in"
    work.mkdir()
    for f in sorted((ROOT / "reports").glob("*-scan-*.json")):
        shutil.copy(f, work / f.name)
    for i, g in enumerate(graphs):
        snap = snapshot_from_raw(g, meta={"name": "synthetic", "capacity": 256 << i})
        save_snapshot(work / f"synthetic-{i}.snapshot.json", snap)
    done = CliRunner().invoke(cli, ["report", str(work), "-o", str(tmp_path / "r.html")])
    assert done.exit_code == 0, done.output
    return (tmp_path / "r.html").read_text(encoding="utf-8"), done.stderr


def test_without_graphviz_small_graphs_are_drawn_and_a_large_one_says_how(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    monkeypatch.setattr(graphviz, "_told", False)
    monkeypatch.chdir(tmp_path)
    big = chain(*(kern(i, f"k_{i}") for i in range(MAX_NODES + 5)))
    page, err = _report(tmp_path, fork(), big)
    assert page.count("class='layered'") == 1 and "k_child2" in page
    assert f"No picture: {MAX_NODES + 5} nodes are more than the {MAX_NODES}" in page
    assert "<code>apt-get install graphviz</code>" in page
    assert err.count("graphcert: note:") == 1 and "1 graph(s) of more than" in err


def test_with_graphviz_its_svg_is_inlined_without_its_prolog(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in `dot` (a shell script printing a fixed SVG with an XML prolog) shows the
    report inlines what Graphviz draws, once per topology, and notes nothing."""
    fake = tmp_path / "bin" / "dot"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\ncat >/dev/null\nprintf '<?xml version=\"1.0\"?>\\n"
                    "<!DOCTYPE svg>\\n<svg id=\"from-fake-dot\"></svg>\\n'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: str(fake) if name == "dot"
                        else None)
    monkeypatch.setattr(graphviz, "_told", False)
    monkeypatch.chdir(tmp_path)
    page, err = _report(tmp_path, fork(), fork())  # one topology, two snapshots
    assert page.count('<svg id="from-fake-dot">') == 1 and "<?xml" not in page
    assert "<!DOCTYPE svg" not in page and "class='layered'" not in page
    assert "the same topology: class 512" in page and "note" not in err
