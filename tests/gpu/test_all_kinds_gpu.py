"""Every node kind the builder makes (conditional IF, IF/ELSE, SWITCH and batch memory
operations included), launched and read back; kernel parameter values; dangling pointers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphcert.cuda.builder import GraphBuilder
from graphcert.cuda.context import RunContext
from graphcert.cuda.handles import dangling_pointers_in
from graphcert.cuda.memory import DeviceBuffer
from graphcert.cuda.params import allocation_of, dangling_pointers
from graphcert.cuda.snapshot import read_snapshot
from graphcert.cuda.stream import Stream
from graphcert.model import NodeKind

from .all_kinds import N, build_all_kinds, expected_effects, run_once, walk

TWELVE = {"kernel", "memcpy", "memset", "host", "graph", "empty", "event_wait", "event_record",
          "mem_alloc", "mem_free", "batch_mem_op", "conditional"}


def test_all_kinds_run(gpu_ctx: RunContext, stream: Stream, test_kernels: Path) -> None:
    g = build_all_kinds(gpu_ctx, test_kernels)
    try:
        assert run_once(g, stream) == expected_effects()
        assert g.host_calls == [1]
        assert (g.buffers["host_out"].array(np.uint32, N) == 7).all()
    finally:
        g.close(gpu_ctx)


def test_all_kinds_read_back(gpu_ctx: RunContext, test_kernels: Path) -> None:
    g = build_all_kinds(gpu_ctx, test_kernels)
    try:
        snap = read_snapshot(g.builder.graph)
        dot_snap = read_snapshot(g.builder.graph, bodies_from="dot")
        flag_ptr = g.buffers["flag"].ptr
        then_ptr = g.buffers["then"].ptr
    finally:
        g.close(gpu_ctx)
    assert set(snap.counts(recursive=True)) == TWELVE
    # Both ways of reading bodies give the same graph (the DOT way on every driver).
    assert (snap.topology_hash, snap.shape_hash) == (dot_snap.topology_hash, dot_snap.shape_hash)
    conds = sorted((n.attrs["type"], n.attrs["size"], len(n.children))
                   for n in walk(snap) if n.kind is NodeKind.CONDITIONAL)
    assert conds == [("if", 1, 1), ("if", 2, 2), ("switch", 3, 3), ("while", 1, 1)]
    # Bodies in the driver's order (then, else; case 0, 1, 2), on the DOT path too.
    for got in (snap, dot_snap):
        bodies = {(n.attrs["type"], n.attrs["size"]): [sorted(b.counts()) for b in n.children]
                  for n in got.nodes if n.kind is NodeKind.CONDITIONAL}
        assert bodies[("if", 2)] == [["kernel"], ["empty", "kernel"]]
        assert bodies[("switch", 3)] == [["kernel"], ["empty"], ["graph"]]
    (batch,) = [n for n in snap.nodes if n.kind is NodeKind.BATCH_MEM_OP]
    assert batch.attrs["count"] == 2 and batch.attrs["ops"] == ["write_value_32", "barrier"]
    for node in walk(snap):
        assert "unread" not in node.attrs, (node.index, node.attrs)
    kernels = [n for n in walk(snap) if n.kind is NodeKind.KERNEL]
    copy = next(n for n in kernels if n.name == "t_copy_u32")
    assert copy.attrs["param_values"][2] == N
    assert len(copy.attrs["param_values"]) == len(copy.attrs["param_sizes"]) == 3
    incs = [n for n in kernels if n.name == "t_increment"]
    pointed = {n.attrs["param_values"][0] for n in incs}
    assert then_ptr in pointed and flag_ptr not in pointed
    for n in incs:  # each counter is a 4-byte cuMemAlloc of its own: at its offset 0
        ((index, offset, size),) = n.attrs["param_pointers"]
        assert (index, offset) == (0, 0) and size >= 4


def test_parameter_values_stay_out_of_fingerprints(gpu_ctx: RunContext,
                                                   test_kernels: Path) -> None:
    inc = gpu_ctx.kernel(test_kernels, "t_increment")
    snaps = []
    for _ in range(2):
        b = GraphBuilder()
        b.add_kernel(inc, 1, 1, gpu_ctx.upload(np.zeros(1, dtype=np.uint32)))
        snaps.append(read_snapshot(b.graph))
        b.graph.destroy()
    a, c = snaps
    assert a.nodes[0].attrs["param_values"] != c.nodes[0].attrs["param_values"]
    assert (a.topology_hash, a.shape_hash) == (c.topology_hash, c.shape_hash)


def test_dangling_pointer_named_by_node_and_parameter(gpu_ctx: RunContext,
                                                      test_kernels: Path) -> None:
    copy = gpu_ctx.kernel(test_kernels, "t_copy_u32")
    src, dst = DeviceBuffer(4 * N), gpu_ctx.alloc(4 * N)
    b = GraphBuilder()
    b.add_kernel(copy, N // 256, 256, src, dst, np.uint32(N))
    try:
        snap = read_snapshot(b.graph)
        assert dangling_pointers(snap) == ()
        address = src.ptr
        src.destroy()
        assert allocation_of(address) is None
        (found,) = dangling_pointers(snap)
        assert (found.node, found.at, found.param, found.value, found.why) == \
            (0, "0", 0, address, "freed")
        assert "parameter 0" in found.line() and "t_copy_u32" in found.line()
        assert dangling_pointers_in(snap, device=0) == (found,)  # the call verify makes
    finally:
        b.graph.destroy()
        gpu_ctx.release_buffers()


def test_snapshot_notes_a_pointer_freed_before_the_read(gpu_ctx: RunContext,
                                                        test_kernels: Path) -> None:
    """graphcert.snapshot of a graph whose kernel points into memory freed before the read:
    the value lies among the graph's live allocations, and the snapshot's notes name it."""
    import graphcert

    copy = gpu_ctx.kernel(test_kernels, "t_copy_u32")
    size = 1 << 21
    a, doomed, c = DeviceBuffer(size), DeviceBuffer(size), DeviceBuffer(size)
    b = GraphBuilder()
    first = b.add_kernel(copy, 1, 256, a, doomed, np.uint32(16))
    b.add_kernel(copy, 1, 256, doomed, c, np.uint32(16), deps=[first])
    try:
        address = doomed.ptr
        doomed.destroy()
        low, high = min(a.ptr, c.ptr), max(a.ptr, c.ptr) + size
        if not low <= address < high:
            pytest.skip("the driver placed the freed buffer outside the live ones")
        snap = graphcert.snapshot(int(b.graph.handle))
        noted = [n for n in snap.notes if n.startswith("dangling pointer:")]
        assert len(noted) == 2, snap.notes
        assert all(f"= {address:#x}" in n and "freed before the graph was read" in n
                   for n in noted)
    finally:
        b.graph.destroy()
        a.destroy()
        c.destroy()
