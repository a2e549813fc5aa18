"""The readers of node kinds no GPU test can build here: external-semaphore signal and wait
(CUDA imports semaphores from Vulkan, Direct3D or NvSciSync but makes none, so no machine
without those can build the nodes), and the batch memory operation reader's fields. The
driver's answers are synthetic stand-ins; what is checked is the reader's use of them."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any

import pytest
from cuda.bindings import driver
from rich.console import Console

from graphcert.cuda import snapshot as reader
from graphcert.model import NodeKind, RawGraph, RawNode, snapshot_from_raw
from graphcert.render.inventory import render_inventory

SUCCESS = driver.CUresult.CUDA_SUCCESS
OP = driver.CUstreamBatchMemOpType


@pytest.mark.parametrize(("kind", "call", "label"), [
    (NodeKind.EXT_SEMAS_SIGNAL, "cuGraphExternalSemaphoresSignalNodeGetParams",
     "signal 3 external semaphores"),
    (NodeKind.EXT_SEMAS_WAIT, "cuGraphExternalSemaphoresWaitNodeGetParams",
     "wait on 3 external semaphores"),
])
def test_external_semaphore_readers(monkeypatch: pytest.MonkeyPatch, kind: NodeKind,
                                    call: str, label: str) -> None:
    asked: list[Any] = []

    def synthetic_answer(node: Any) -> tuple[Any, Any]:
        asked.append(node)
        return SUCCESS, SimpleNamespace(numExtSems=3)

    monkeypatch.setattr(driver, call, synthetic_answer)
    attrs, children = reader.READERS[kind]("node-handle", None)  # type: ignore[arg-type]
    assert (attrs, children, asked) == ({"count": 3}, (), ["node-handle"])
    snap = snapshot_from_raw(RawGraph((RawNode(0, kind, attrs),), ()))
    other = snapshot_from_raw(RawGraph((RawNode(0, kind, {"count": 4}),), ()))
    assert snap.topology_hash == other.topology_hash and snap.shape_hash != other.shape_hash
    console = Console(file=io.StringIO(), width=120, color_system=None, record=True)
    render_inventory(console, snap, tree=True)
    assert label in console.export_text()


def test_batch_mem_op_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    # A real struct filled from Python, then seen through a second wrapper of the same memory,
    # as the driver's answer is: that wrapper's paramArray getter returns [] (cuda-bindings
    # keeps the length beside the struct), which is how the H100 run read no operations.
    filled = driver.CUDA_BATCH_MEM_OP_NODE_PARAMS()
    ops = [driver.CUstreamBatchMemOpParams() for _ in range(3)]
    for op, kind in zip(ops, (OP.CU_STREAM_MEM_OP_WRITE_VALUE_32, OP.CU_STREAM_MEM_OP_BARRIER,
                              OP.CU_STREAM_MEM_OP_WAIT_VALUE_64), strict=True):
        op.operation = kind
    filled.paramArray = ops
    filled.count = 3
    as_driver_gives = driver.CUDA_BATCH_MEM_OP_NODE_PARAMS(_ptr=filled.getPtr())
    assert as_driver_gives.paramArray == []  # the binding's blind spot the reader goes around
    monkeypatch.setattr(driver, "cuGraphBatchMemOpNodeGetParams",
                        lambda _node: (SUCCESS, as_driver_gives))
    attrs, _ = reader.READERS[NodeKind.BATCH_MEM_OP]("node", None)  # type: ignore[arg-type]
    assert attrs == {"count": 3, "ops": ["write_value_32", "barrier", "wait_value_64"]}
    # Which operations is a value: two batches of three differ in neither fingerprint.
    a = snapshot_from_raw(RawGraph((RawNode(0, NodeKind.BATCH_MEM_OP, attrs),), ()))
    b = snapshot_from_raw(RawGraph((RawNode(0, NodeKind.BATCH_MEM_OP,
                                            {"count": 3, "ops": ["barrier"] * 3}),), ()))
    assert (a.topology_hash, a.shape_hash) == (b.topology_hash, b.shape_hash)


def test_allocation_lookup_tells_no_allocation_from_a_failure(monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """Synthetic driver answers: an address no allocation holds is None; a failed lookup
    (no current context) raises rather than reading as a freed pointer."""
    from graphcert.cuda.params import allocation_of
    from graphcert.errors import CudaError

    answers = {0x1000: (SUCCESS, 0x0F00, 4096),
               0x2000: (driver.CUresult.CUDA_ERROR_NOT_FOUND, 0, 0),
               0x3000: (driver.CUresult.CUDA_ERROR_INVALID_CONTEXT, 0, 0)}
    monkeypatch.setattr(driver, "cuMemGetAddressRange", lambda a: answers[a])
    assert allocation_of(0x1000) == (0x0F00, 4096)
    assert allocation_of(0x2000) is None and allocation_of(0) is None
    with pytest.raises(CudaError):
        allocation_of(0x3000)
