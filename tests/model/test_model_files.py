"""The pure graph model's JSON files (save, load, refusals) and diffs.

All graphs here are synthetic (kernel names k_*), built in code; nothing imitates a real GPU.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from _modelgraphs import chain, fork, kern, memset

from graphcert.errors import InputError
from graphcert.model import (
    SNAPSHOT_KIND,
    NodeKind,
    RawGraph,
    diff_snapshots,
    load_snapshot,
    save_snapshot,
    snapshot_from_json,
    snapshot_from_raw,
    snapshot_to_json,
)

K = NodeKind


# ---------------------------------------------------------------- JSON


def test_json_round_trip(tmp_path: Path) -> None:
    s = snapshot_from_raw(fork(), meta={"workload": "synthetic", "capacity": 8})
    doc = snapshot_to_json(s)
    assert list(doc) == ["schema_version", "kind", "topology_hash", "shape_hash", "counts",
                         "meta", "nodes", "edges"]
    assert doc["kind"] == SNAPSHOT_KIND and doc["schema_version"] == 2
    assert doc["counts"] == {"kernel": 5, "memset": 1, "graph": 1}
    assert set(doc["nodes"][0]) == {"index", "kind", "deps", "attrs", "children"}
    assert doc["nodes"][-1]["children"][0]["nodes"][1]["deps"] == [0]
    assert snapshot_from_json(json.loads(json.dumps(doc))) == s
    path = save_snapshot(tmp_path / "sub" / "snap.json", s)
    assert load_snapshot(path) == s
    save_snapshot(path, s)  # overwrite in place
    assert sorted(p.name for p in path.parent.iterdir()) == ["snap.json"]  # no temp left


def test_save_failure_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(InputError, match="cannot write: No space left"):
        save_snapshot(tmp_path / "snap.json", snapshot_from_raw(fork()))
    assert list(tmp_path.iterdir()) == []


def _edit(doc: dict[str, Any], how: str) -> Any:
    if how == "certificate":
        return {"schema_version": 1, "kind": "topology", "tool": {"name": "graphcert"}}
    if how == "other kind":
        return {**doc, "kind": "something.else"}
    if how == "no kind":
        return {k: v for k, v in doc.items() if k != "kind"}
    if how == "a list":
        return [doc]
    if how == "newer":
        return {**doc, "schema_version": 3}
    if how == "missing nodes":
        return {k: v for k, v in doc.items() if k != "nodes"}
    if how == "missing nested":
        del doc["nodes"][-1]["children"][0]["edges"]
    elif how == "edited grid":
        doc["nodes"][1]["attrs"]["grid"] = [5, 1, 1]
    elif how == "edited name":
        doc["nodes"][1]["attrs"]["name"] = "k_zzz"
    elif how == "edited hash":
        doc["shape_hash"] = "0" * 64
    elif how == "edited child hash":
        doc["nodes"][-1]["children"][0]["topology_hash"] = "0" * 64
    elif how == "edited deps":
        doc["nodes"][2]["deps"] = []
    elif how == "bad kind":
        doc["nodes"][0]["kind"] = "teleport"
    return doc


@pytest.mark.parametrize("how,message", [
    ("certificate", "is a graphcert certificate ('topology'), not a snapshot"),
    ("other kind", "not a graphcert snapshot (kind is 'something.else')"),
    ("no kind", "not a graphcert snapshot (no 'kind' field)"),
    ("a list", "not a graphcert snapshot (the JSON is a list, not an object)"),
    ("newer", "snapshot schema_version 3 is newer than this graphcert reads (2)"),
    ("missing nodes", "missing field 'nodes'"),
    ("missing nested", "missing field 'nodes[6].children[0].edges'"),
    ("edited grid", "corrupt or edited: shape_hash does not match"),
    ("edited name", "corrupt or edited: topology_hash does not match"),
    ("edited hash", "corrupt or edited: shape_hash does not match"),
    ("edited child hash", "corrupt or edited: nodes[6].children[0].topology_hash"),
    ("edited deps", "corrupt or edited: nodes[2].deps disagrees with the edges"),
    ("bad kind", "field 'nodes[0].kind': unknown node kind 'teleport'"),
])
def test_bad_snapshot_documents(tmp_path: Path, how: str, message: str) -> None:
    doc = snapshot_to_json(snapshot_from_raw(fork()))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_edit(json.loads(json.dumps(doc)), how)))
    with pytest.raises(InputError) as info:
        load_snapshot(path)
    text = str(info.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text


@pytest.mark.parametrize("content,message", [
    (None, "no such file"),
    (b"{not json", "not JSON (Expecting property name enclosed in double quotes"),
    (b"\xff\xfe", "not JSON (not UTF-8 text)"),
])
def test_unreadable_files(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "x.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match="^" + re.escape(f"{path}: {message}")):
        load_snapshot(path)


def test_a_folder_is_not_a_snapshot(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a folder, not a file"):
        load_snapshot(tmp_path)


# ---------------------------------------------------------------- diff


def test_diff_identical() -> None:
    a = snapshot_from_raw(fork())
    d = diff_snapshots(a, a)
    assert d.identical and d.topology_equal and d.shape_equal
    assert d.summary() == "parameters only"


def test_diff_values_only() -> None:
    a = snapshot_from_raw(chain(memset(0, value=0), kern(1, "k_a")))
    b = snapshot_from_raw(chain(memset(0, value=7), kern(1, "k_a")))
    d = diff_snapshots(a, b)
    assert d.summary() == "parameters only" and not d.identical
    assert [tuple(c) for c in d.changed] == [(0, 0, "value", 0, 7)]


def test_diff_launch_shape() -> None:
    a = snapshot_from_raw(chain(memset(0), kern(1, "k_a", 4)))
    b = snapshot_from_raw(chain(memset(0), kern(1, "k_a", 8)))
    d = diff_snapshots(a, b)
    assert d.summary() == "launch shape" and not d.added and not d.removed
    assert [tuple(c) for c in d.changed] == [(1, 1, "grid", [4, 1, 1], [8, 1, 1])]


def test_diff_topology_added_removed_and_deps() -> None:
    a = snapshot_from_raw(chain(memset(0), kern(1, "k_a"), kern(2, "k_b"), kern(3, "k_c")))
    b = snapshot_from_raw(chain(memset(0), kern(1, "k_a"), kern(3, "k_c"), kern(4, "k_d")))
    d = diff_snapshots(a, b)
    assert d.summary() == "topology" and not d.topology_equal and not d.shape_equal
    assert [n.name for n in d.removed] == ["k_b"]
    assert [n.name for n in d.added] == ["k_d"]
    # k_c followed k_b (removed, named as a's node 2); now it follows k_a (index 1 in b).
    assert [tuple(c) for c in d.changed] == [(3, 2, "deps", ["a2 (removed)"], [1])]


def test_diff_renamed_kernel_is_removed_and_added() -> None:
    d = diff_snapshots(snapshot_from_raw(chain(kern(0, "k_a"), kern(1, "k_b"))),
                       snapshot_from_raw(chain(kern(0, "k_a"), kern(1, "k_z"))))
    assert [n.name for n in d.removed] == ["k_b"] and [n.name for n in d.added] == ["k_z"]


def test_diff_edge_only_change() -> None:
    a = snapshot_from_raw(RawGraph((kern(0, "k_a"), kern(1, "k_b")), ((0, 1),)))
    b = snapshot_from_raw(RawGraph((kern(0, "k_a"), kern(1, "k_b")), ()))
    d = diff_snapshots(a, b)
    assert d.summary() == "topology"
    # deps on both sides in b's numbering: k_b followed k_a, wherever k_a stands in b
    k_a_in_b = next(n.index for n in b.nodes if n.name == "k_a")
    assert [(c.field, c.value_a, c.value_b) for c in d.changed] == [("deps", [k_a_in_b], [])]


def test_diff_dependency_moved_to_another_node_never_reads_equal() -> None:
    """A node whose predecessor moved from k_x to a new k_new at the same index was listed
    as "deps 0 -> 0" (issue 17): both sides are now in b's numbering."""
    a = snapshot_from_raw(chain(kern(0, "k_x"), kern(1, "k_y")))
    b = snapshot_from_raw(RawGraph((kern(0, "k_new"), kern(1, "k_x"), kern(2, "k_y")),
                                   ((0, 2),)))
    assert [(n.name, n.deps) for n in b.nodes] == [("k_new", ()), ("k_x", ()), ("k_y", (0,))]
    d = diff_snapshots(a, b)
    # k_y followed k_x (node 1 in b), now k_new (node 0 in b)
    assert [tuple(c) for c in d.changed] == [(1, 2, "deps", [1], [0])]
    assert [n.name for n in d.added] == ["k_new"]


def test_diff_recurses_into_child_graphs() -> None:
    d = diff_snapshots(snapshot_from_raw(fork()), snapshot_from_raw(fork(child_grid=3)))
    assert d.summary() == "launch shape"
    (change,) = d.changed
    assert (change.index_a, change.field) == (6, "children")
    (child,) = d.child_diffs
    assert (child.index_a, child.position, child.kind) == (6, 0, K.GRAPH)
    assert [tuple(c) for c in child.diff.changed] == [(0, 0, "grid", [1, 1, 1], [3, 1, 1])]


def test_schema_1_files_are_refingerprinted_with_a_note(tmp_path: Path) -> None:
    """A schema-1 file (old fingerprint scheme) loads: hashes recomputed, a note says so."""
    s = snapshot_from_raw(fork())
    doc = json.loads(json.dumps(snapshot_to_json(s)))
    doc["schema_version"] = 1
    doc["topology_hash"] = doc["shape_hash"] = "1" * 64  # what the old scheme stored
    old = snapshot_from_json(doc)
    assert (old.topology_hash, old.shape_hash) == (s.topology_hash, s.shape_hash)
    assert len(old.notes) == 1 and "schema-1" in old.notes[0] and "re-capture" in old.notes[0]
    path = save_snapshot(tmp_path / "again.json", old)  # saved as schema 2, note kept
    again = load_snapshot(path)
    assert json.loads(path.read_text())["schema_version"] == 2 and again == old
