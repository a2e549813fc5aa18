"""Kernel parameter values (issue 33): read from a node's parameter buffer, kept out of both
fingerprints, shown by inventory --tree and diff, and the pointers among them checked.

Everything here that is not a recorded fixture is synthetic: hand-made parameter buffers
and values (named synthetic), and stand-ins for the driver's answers."""

from __future__ import annotations

import ctypes
import io
import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from graphcert.cuda import params as cuda_params
from graphcert.errors import InputError
from graphcert.model import (
    GraphSnapshot,
    NodeKind,
    RawGraph,
    RawNode,
    diff_snapshots,
    load_snapshot,
    snapshot_from_raw,
)
from graphcert.model.params import (
    DanglingPointer,
    encode_param,
    format_param,
    param_change_lines,
)
from graphcert.render.diff import render_diff
from graphcert.render.inventory import render_inventory

SNAPS = Path(__file__).resolve().parents[1] / "fixtures" / "snapshots"
TABLE = json.loads((SNAPS.parent / "snapshot_fingerprints.json").read_text())


def _raw(s: GraphSnapshot, extra: Any = None) -> RawGraph:
    """A reader's graph of a snapshot, each kernel's attrs extended by extra(node)."""
    nodes = []
    for n in s.nodes:
        attrs = dict(n.attrs)
        if extra is not None and n.kind is NodeKind.KERNEL:
            attrs.update(extra(n))
        nodes.append(RawNode(n.index, n.kind, attrs, tuple(_raw(c, extra) for c in n.children)))
    edges = [(a, b) for a, b in s.edges]
    data = {(a, b): d for a, b, d in s.edge_data}
    return RawGraph(tuple(nodes), tuple((a, b, data[(a, b)]) if (a, b) in data else (a, b)
                                        for a, b in edges))


@pytest.mark.parametrize("name", sorted(TABLE))
def test_recorded_fixture_fingerprints_unchanged(name: str) -> None:
    """Re-recording the fixtures with parameter values must not move a fingerprint: the
    table holds the hashes they had before values were read."""
    s = load_snapshot(SNAPS / name)
    assert {"topology_hash": s.topology_hash, "shape_hash": s.shape_hash} == TABLE[name]


@pytest.mark.parametrize("name", sorted(TABLE))
def test_recorded_fixtures_hold_parameter_values(name: str) -> None:
    """Every kernel, nested bodies too, was read with its values (re-recorded 2026-11-25)."""
    def kernels(s: GraphSnapshot) -> list[Any]:
        return [k for n in s.nodes for k in ([n] if n.kind is NodeKind.KERNEL else [])
                + [k for c in n.children for k in kernels(c)]]

    found = kernels(load_snapshot(SNAPS / name))
    assert found and all(len(k.attrs["param_values"]) == len(k.attrs["param_sizes"])
                         for k in found)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_synthetic_values_stay_out_of_fingerprints(name: str) -> None:
    s = load_snapshot(SNAPS / name)
    counter = iter(range(10**6))

    def synthetic_values(n: Any) -> dict[str, Any]:  # a different value per node
        sizes = n.attrs.get("param_sizes") or [8]
        return {"param_values": [0x7F0000000000 + 256 * next(counter) for _ in sizes],
                "param_pointers": [[0, 0, 4096]]}

    again = snapshot_from_raw(_raw(s, synthetic_values))
    assert (again.topology_hash, again.shape_hash) == (s.topology_hash, s.shape_hash)


def test_encode_and_format() -> None:
    assert encode_param(bytes([0xE8, 0x03, 0, 0])) == 1000
    assert encode_param((1 << 40).to_bytes(8, "little")) == 1 << 40
    assert encode_param(b"\x01\x02\x03") == "hex:010203"
    long = encode_param(bytes(300))
    assert isinstance(long, str) and long.endswith("...(+44 bytes)")
    assert format_param(1024) == "1024" and format_param(0x7F0000001000) == "0x7f0000001000"
    assert param_change_lines([1, 1000, 3], [1, 1024, 3]) == ["parameter 1: 1000 -> 1024"]
    assert param_change_lines([1], [1, 2]) == ["parameter 1: - -> 2"]


def _synthetic_pair() -> tuple[GraphSnapshot, GraphSnapshot]:
    def one(n: int) -> GraphSnapshot:
        attrs = {"name": "k_gather", "grid": [4, 1, 1], "block": [256, 1, 1],
                 "shared_mem_bytes": 0, "param_sizes": [8, 8, 4, 4, 4, 4],
                 "param_values": [0x7F0000000000, 0x7F0000100000, 3, 1, 2, n],
                 "param_pointers": [[0, 0, 4 * n], [1, 0, 4096]]}
        return snapshot_from_raw(RawGraph((RawNode(0, NodeKind.KERNEL, attrs),), ()))
    return one(1000), one(1024)


def test_diff_says_which_parameter_changed() -> None:
    a, b = _synthetic_pair()
    d = diff_snapshots(a, b)
    assert d.summary() == "parameters only"
    assert d.summary_lines() == ["0: parameter 5: 1000 -> 1024"]
    console = Console(file=io.StringIO(), width=120, color_system=None, record=True)
    render_diff(console, d)
    text = console.export_text()
    assert "parameter 5" in text and "1000" in text and "1024" in text
    assert "param_pointers" not in text and text.rstrip().endswith("0 removed, 0 added, 1 changed")


def test_inventory_tree_shows_values() -> None:
    a, _ = _synthetic_pair()
    console = Console(file=io.StringIO(), width=200, color_system=None, record=True)
    render_inventory(console, a, tree=True)
    assert "params (0x7f0000000000, 0x7f0000100000, 3, 1, 2, 1000)" in console.export_text()


def _synthetic_node_params(values: list[bytes]) -> tuple[Any, list[Any]]:
    """A stand-in for CUDA_KERNEL_NODE_PARAMS whose kernelParams is a real void** array."""
    keep = [ctypes.create_string_buffer(v, len(v)) for v in values]
    array = (ctypes.c_uint64 * len(keep))(*[ctypes.addressof(b) for b in keep])
    keep.append(array)
    return SimpleNamespace(kernelParams=ctypes.addressof(array), extra=0), keep


def test_reader_takes_values_from_the_node_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    layout = [(0, 8), (8, 8), (16, 4), (20, 3)]
    monkeypatch.setattr(cuda_params, "param_layout", lambda *_a, **_k: layout)
    live = {0x7F0000000010: (0x7F0000000000, 4096)}
    monkeypatch.setattr(cuda_params, "allocation_of", lambda v, strict=True: live.get(v))
    p, _keep = _synthetic_node_params([(0x7F0000000010).to_bytes(8, "little"),
                                       (77).to_bytes(8, "little"),
                                       (1000).to_bytes(4, "little"), b"\x0a\x0b\x0c"])
    got = cuda_params.param_attrs(p, func=object())
    assert got == {"param_values": [0x7F0000000010, 77, 1000, "hex:0a0b0c"],
                   "param_pointers": [[0, 16, 4096]]}


def test_reader_finds_pointers_packed_in_a_struct(monkeypatch: pytest.MonkeyPatch) -> None:
    """Synthetic: a 40-byte struct parameter (as PyTorch's elementwise kernels pass their
    data pointers) holding two live pointers, a size, a small value that an allocation holds
    (below 4 GiB: not looked up) and a large value no allocation holds."""
    monkeypatch.setattr(cuda_params, "param_layout", lambda *_a, **_k: [(0, 4), (8, 40)])
    live = {0x7F0000000040: (0x7F0000000000, 4096), 0x7F0000200000: (0x7F0000200000, 1 << 20),
            4096: (0, 8192)}
    asked: list[int] = []

    def allocation(v: int, strict: bool = True) -> tuple[int, int] | None:
        asked.append(v)
        return live.get(v)

    monkeypatch.setattr(cuda_params, "allocation_of", allocation)
    words = [0x7F0000000040, 4096, 0x7F0000200000, 1024, 0x7E0000000000]
    struct = b"".join(w.to_bytes(8, "little") for w in words)
    p, _keep = _synthetic_node_params([(3).to_bytes(4, "little"), struct])
    got = cuda_params.param_attrs(p, func=object())
    assert got["param_values"] == [3, "hex:" + struct.hex()]
    assert got["param_pointers"] == [[1, 0x40, 4096, 0, 0x7F0000000040],
                                     [1, 0, 1 << 20, 16, 0x7F0000200000]]
    assert 4096 not in asked and 1024 not in asked  # sizes and strides are not looked up


def test_dangling_pointer_inside_a_struct_names_its_byte(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """Synthetic: a struct parameter's pointer at byte 16 freed, the one at byte 0 alive."""
    attrs = {"name": "k_synthetic", "grid": [1, 1, 1], "block": [1, 1, 1],
             "shared_mem_bytes": 0, "param_sizes": [4, 300],
             "param_values": [3, "hex:00...(+44 bytes)"],
             "param_pointers": [[1, 0x40, 4096, 0, 0x7F0000000040],
                                [1, 0, 4096, 16, 0x7F0000200000]]}
    snap = snapshot_from_raw(RawGraph((RawNode(0, NodeKind.KERNEL, attrs),), ()))
    now = {0x7F0000000040: (0x7F0000000000, 4096)}
    monkeypatch.setattr(cuda_params, "allocation_of", lambda v, strict=True: now.get(v))
    (found,) = cuda_params.dangling_pointers(snap)
    assert (found.node, found.param, found.byte, found.why) == (0, 1, 16, "freed")
    assert "parameter 1 (the pointer at byte 16) = 0x7f0000200000" in found.line()
    assert DanglingPointer.from_json(found.to_json()) == found


def test_reader_takes_values_from_an_extra_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cuda_params, "param_layout", lambda *_a, **_k: [(0, 4), (8, 8)])
    monkeypatch.setattr(cuda_params, "allocation_of", lambda _v, strict=True: None)
    buf = ctypes.create_string_buffer((5).to_bytes(4, "little") + bytes(4)
                                      + (9).to_bytes(8, "little"), 16)
    size = ctypes.c_size_t(16)
    extra = (ctypes.c_uint64 * 5)(1, ctypes.addressof(buf), 2, ctypes.addressof(size), 0)
    p = SimpleNamespace(kernelParams=0, extra=ctypes.addressof(extra))
    assert cuda_params.param_attrs(p, func=object()) == {"param_values": [5, 9],
                                                        "param_pointers": []}
    none = SimpleNamespace(kernelParams=0, extra=0)
    assert "kernelParams" in cuda_params.param_attrs(none, func=object())["unread"][
        "param_values"]


def test_dangling_pointers_named_by_node_and_parameter(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    """Synthetic allocations: parameter 0 freed, parameter 1 in another allocation now,
    parameter 2 (not recorded as a pointer) inside the graph's span with nothing there."""
    attrs = {"name": "k_synthetic", "grid": [1, 1, 1], "block": [1, 1, 1],
             "shared_mem_bytes": 0, "param_sizes": [8, 8, 8, 8, 4],
             "param_values": [0x7F0000000000, 0x7F0000100010, 0x7F0000050000, 0x7F0000100020,
                              7],
             "param_pointers": [[0, 0, 4096], [1, 16, 4096], [3, 32, 4096]]}
    kernel = RawNode(0, NodeKind.KERNEL, attrs)
    body = RawGraph((RawNode(0, NodeKind.KERNEL, attrs),), ())
    cond = RawNode(1, NodeKind.CONDITIONAL, {"type": "while", "size": 1}, (body,))
    snap = snapshot_from_raw(RawGraph((kernel, cond), ((0, 1),)))
    now = {0x7F0000100010: (0x7F0000100000, 8192), 0x7F0000100020: (0x7F0000100000, 4096)}
    monkeypatch.setattr(cuda_params, "allocation_of", lambda v, strict=True: now.get(v))
    found = cuda_params.dangling_pointers(snap)
    got = {(f.at, f.param, f.why) for f in found}
    assert got == {(at, param, why) for at in ("0", "1[0].0")
                   for param, why in ((0, "freed"), (1, "reused"), (2, "unmapped"))}
    inner = next(f for f in found if f.at == "1[0].0" and f.param == 0)
    assert inner.node == 1 and "k_synthetic" in inner.line() and "parameter 0" in inner.line()
    assert DanglingPointer.from_json(inner.to_json()) == inner
    with pytest.raises(InputError):
        DanglingPointer.from_json({**inner.to_json(), "why": "lost"})
    healthy = {0x7F0000000000: (0x7F0000000000, 4096), 0x7F0000050000: (0x7F0000050000, 64),
               **{v: (0x7F0000100000, 4096) for v in (0x7F0000100010, 0x7F0000100020)}}
    monkeypatch.setattr(cuda_params, "allocation_of", lambda v, strict=True: healthy.get(v))
    assert cuda_params.dangling_pointers(snap) == ()


def test_notes_carry_dangling_pointers() -> None:
    a, _ = _synthetic_pair()
    noted = replace(a, notes=("dangling pointer: node 0 parameter 0",))
    console = Console(file=io.StringIO(), width=200, color_system=None, record=True)
    render_inventory(console, noted)
    assert "note: dangling pointer: node 0 parameter 0" in console.export_text()


def test_recorded_class_diff_names_the_size_parameter() -> None:
    """resident_axpb(params, x, y, n) is captured at n = the class capacity: class 256 and
    class 512 differ in parameter 3."""
    a, b = (load_snapshot(SNAPS / f"resident-c{c}.snapshot.json") for c in (256, 512))
    (kernel,) = [n for n in a.nodes if n.kind is NodeKind.KERNEL]
    lines = diff_snapshots(a, b).summary_lines()
    assert f"{kernel.index}: parameter 3: 256 -> 512" in lines, lines
