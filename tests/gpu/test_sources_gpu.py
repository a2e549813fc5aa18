"""Graphs made by PyTorch, CuPy, cuda.core and the driver API, read through graphcert.snapshot.

Each framework test skips with its own reason when that framework is not installed; the GPU
itself skips only through the gpu_ctx fixture (no driver / no device)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import graphcert
from graphcert.cuda.context import RunContext
from graphcert.errors import InputError
from graphcert.model import GraphSnapshot, NodeKind
from graphcert.model.params import PARAM_POINTERS, PARAM_VALUES
from tests._cudatorch import cuda_torch


def _kernels(snap: GraphSnapshot) -> list[Any]:
    return [n for n in snap.nodes if n.kind is NodeKind.KERNEL]


def _torch_mlp(torch: Any, batch: int, keep_graph: bool = True) -> tuple[Any, list[Any]]:
    """A fp16 two-layer MLP step captured by PyTorch; returns the graph and what it uses."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 256)).cuda().half()
    x = torch.randn(batch, 256, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm up: cuBLAS handles and workspaces, not captured
            for _ in range(3):
                model(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph(keep_graph=keep_graph)
        with torch.cuda.graph(graph):
            y = model(x)
    return graph, [model, x, y]


def test_torch_cuda_graph(gpu_ctx: RunContext) -> None:
    torch = cuda_torch()
    g1, keep1 = _torch_mlp(torch, 8)
    g2, keep2 = _torch_mlp(torch, 8)
    a = graphcert.snapshot(g1, name="mlp-b8")
    b = graphcert.snapshot(g2)
    kernels = _kernels(a)
    assert len(kernels) >= 3, a.counts()  # two GEMMs (with their bias) and the ReLU at least
    assert all(k.attrs["name"] and k.attrs["grid"][0] >= 1 for k in kernels)
    assert a.meta["source"] == "torch.cuda.CUDAGraph" and a.meta["name"] == "mlp-b8"
    assert a.meta["framework"].startswith("torch ")
    assert (a.topology_hash, a.shape_hash) == (b.topology_hash, b.shape_hash)
    d = graphcert.diff(a, b)
    # two captures over different tensors: the same graph, only the kernels' parameter
    # values (their pointers, some packed in struct parameters) differ
    assert d.summary() == "parameters only" and not (d.added or d.removed)
    assert {c.field for c in d.changed} <= {PARAM_VALUES, PARAM_POINTERS}, d.summary_lines()
    assert all(": parameter " in line for line in d.summary_lines()), d.summary_lines()
    g1.instantiate()  # reading left PyTorch's graph usable
    g1.replay()
    torch.cuda.synchronize()
    del keep1, keep2


def test_torch_graph_without_keep_graph_is_one_line(gpu_ctx: RunContext) -> None:
    torch = cuda_torch()
    graph, keep = _torch_mlp(torch, 8, keep_graph=False)
    with pytest.raises(InputError, match="without keep_graph=True") as info:
        graphcert.snapshot(graph)
    assert "torch.cuda.CUDAGraph(keep_graph=True)" in info.value.one_line()
    del keep


def _cupy_graph(cp: Any, n: int = 4096) -> tuple[Any, list[Any]]:
    a = cp.arange(n, dtype=cp.float32)
    out = cp.empty_like(a)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        for capture in (False, True):  # the first pass compiles and loads the kernels
            if capture:
                stream.begin_capture()
            cp.multiply(a, 2.0, out=out)
            cp.add(out, 1.0, out=out)
            if not capture:
                stream.synchronize()
        graph = stream.end_capture()
    return graph, [a, out, stream]


def test_cupy_graph(gpu_ctx: RunContext) -> None:
    cp = pytest.importorskip("cupy", reason="CuPy is not installed")
    cp.cuda.Device(gpu_ctx.device.index).use()
    g1, keep1 = _cupy_graph(cp)
    g2, keep2 = _cupy_graph(cp)
    a, b = graphcert.snapshot(g1), graphcert.snapshot(g2)
    assert a.counts().get("kernel") == 2 and len(a.edges) >= 1, a.counts()
    assert all(k.attrs["name"] for k in _kernels(a))
    assert a.meta["source"] == "cupy.cuda.Graph"
    assert (a.topology_hash, a.shape_hash) == (b.topology_hash, b.shape_hash)
    del keep1, keep2


_SCALE = r"""
extern "C" __global__ void scale(float* x, unsigned int n) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 2.0f * x[i];
}
"""


def _core_builder(core: Any, gpu_ctx: RunContext, n: int = 4096) -> tuple[Any, list[Any]]:
    dev = core.Device(gpu_ctx.device.index)
    dev.set_current()
    options = core.ProgramOptions(arch=f"sm_{dev.arch}", std="c++17")
    kernel = core.Program(_SCALE, "c++", options).compile("cubin").get_kernel("scale")
    buf = gpu_ctx.alloc(4 * n)
    config = core.LaunchConfig(grid=n // 256, block=256)
    warm = dev.create_stream()  # load the kernel outside the graph
    core.launch(warm, config, kernel, buf.ptr, np.uint32(n))
    warm.sync()
    builder = dev.create_graph_builder()
    builder.begin_building()
    for _ in range(2):
        core.launch(builder, config, kernel, buf.ptr, np.uint32(n))
    builder.end_building()
    return builder, [kernel, buf, warm]


def test_cuda_core_graph_builder(gpu_ctx: RunContext) -> None:
    core = pytest.importorskip("cuda.core", reason="cuda.core is not installed")
    b1, keep1 = _core_builder(core, gpu_ctx)
    b2, keep2 = _core_builder(core, gpu_ctx)
    a = graphcert.snapshot(b1)
    assert a.counts() == {"kernel": 2} and len(a.edges) == 1
    assert [k.attrs["name"] for k in _kernels(a)] == ["scale", "scale"]
    assert _kernels(a)[0].attrs["grid"] == [16, 1, 1]
    assert _kernels(a)[0].attrs["block"] == [256, 1, 1]
    assert a.meta["source"] == "cuda.core GraphBuilder"
    d = graphcert.snapshot(b1.graph_definition)
    b = graphcert.snapshot(b2)
    assert (a.topology_hash, a.shape_hash) == (d.topology_hash, d.shape_hash)
    assert (a.topology_hash, a.shape_hash) == (b.topology_hash, b.shape_hash)
    executable = b1.complete()
    with pytest.raises(InputError, match="executable graph"):
        graphcert.snapshot(executable)
    executable.close()
    for builder in (b1, b2):
        builder.close()
    del keep1, keep2


def test_raw_cugraph_and_address(gpu_ctx: RunContext) -> None:
    from cuda.bindings import driver

    err, graph = driver.cuGraphCreate(0)
    assert int(err) == 0
    try:
        buf = gpu_ctx.alloc(4 * 1024)
        params = driver.CUDA_MEMSET_NODE_PARAMS()
        params.dst, params.elementSize, params.width = buf.ptr, 4, 1024
        params.height, params.pitch, params.value = 1, 0, 7
        err, memset = driver.cuGraphAddMemsetNode(graph, [], 0, params,
                                                  gpu_ctx.device.context)
        assert int(err) == 0
        err, _ = driver.cuGraphAddEmptyNode(graph, [memset], 1)
        assert int(err) == 0
        by_object = graphcert.snapshot(graph)
        by_address = graphcert.snapshot(int(graph))
        assert by_object.counts() == {"memset": 1, "empty": 1} and len(by_object.edges) == 1
        memset_node = next(n for n in by_object.nodes if n.kind is NodeKind.MEMSET)
        assert memset_node.attrs["bytes"] == 4096 and memset_node.attrs["value"] == 7
        assert by_object.topology_hash == by_address.topology_hash
        assert by_object.meta["source"] == "cuda.bindings CUgraph"

        # A thread with no current context: the device's primary context is held for the read.
        seen: list[Any] = []

        def read_elsewhere() -> None:
            try:
                seen.append(graphcert.snapshot(int(graph)))
            except Exception as exc:  # handed back to the test thread below
                seen.append(exc)

        worker = threading.Thread(target=read_elsewhere)
        worker.start()
        worker.join()
        assert isinstance(seen[0], GraphSnapshot), seen
        assert seen[0].shape_hash == by_object.shape_hash
    finally:
        driver.cuGraphDestroy(graph)
