"""Graphs built node by node (not only by capture): typed adders for empty, kernel, memset,
memcpy, host, child-graph, event record/wait, mem alloc/free and conditional WHILE nodes."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from cuda.bindings import driver

from graphcert.cuda.check import check
from graphcert.cuda.graph import Graph, GraphRef
from graphcert.cuda.memory import DeviceBuffer, PinnedBuffer
from graphcert.cuda.module import Kernel
from graphcert.cuda.stream import Event


def _current_context() -> Any:
    """The calling thread's context: memset, memcpy and conditional nodes name it."""
    return check(driver.cuCtxGetCurrent(), "cuCtxGetCurrent")


# The driver calls a host node's function through this C signature (void fn(void*)).
HostCallback = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class GraphBuilder:
    """Builds a Graph node by node. Each add_* returns the new node handle."""

    def __init__(self, graph: Graph | None = None):
        self.graph = graph if graph is not None else Graph()

    @staticmethod
    def _deps(deps: list[Any] | tuple[Any, ...] | None) -> tuple[list[Any], int]:
        deps = list(deps or [])
        return deps, len(deps)

    def _keep(self, obj: Any) -> None:
        self.graph._keepalive.append(obj)

    def add_empty(self, deps: Any = None) -> Any:
        d, n = self._deps(deps)
        return check(driver.cuGraphAddEmptyNode(self.graph.handle, d, n), "cuGraphAddEmptyNode")

    def add_kernel(self, kernel: Kernel, grid: Any, block: Any, *args: Any, shared: int = 0,
                   deps: Any = None) -> Any:
        params, packed = kernel.node_params(grid, block, *args, shared=shared)
        self._keep(packed)
        d, n = self._deps(deps)
        return check(driver.cuGraphAddKernelNode(self.graph.handle, d, n, params),
                     f"cuGraphAddKernelNode({kernel.name})")

    def add_memset(self, buffer: DeviceBuffer | int, value: int, count: int,
                   element_size: int = 4, deps: Any = None) -> Any:
        """Set `count` elements of 1, 2 or 4 bytes (a DeviceBuffer or a graph allocation)."""
        p = driver.CUDA_MEMSET_NODE_PARAMS()
        p.dst = buffer if isinstance(buffer, int) else buffer.ptr
        p.value = value
        p.elementSize = element_size
        p.width = count
        p.height = 1
        p.pitch = 0
        return self._add_in_context(driver.cuGraphAddMemsetNode, "cuGraphAddMemsetNode", p,
                                    deps)

    def add_memcpy(self, dst: DeviceBuffer | PinnedBuffer, src: DeviceBuffer | PinnedBuffer,
                   nbytes: int, deps: Any = None) -> Any:
        """A 1-D copy between device and pinned host buffers, in any direction."""
        p = driver.CUDA_MEMCPY3D()
        for side, buf in (("src", src), ("dst", dst)):
            if isinstance(buf, DeviceBuffer):
                setattr(p, f"{side}MemoryType", driver.CUmemorytype.CU_MEMORYTYPE_DEVICE)
                setattr(p, f"{side}Device", buf.ptr)
            else:
                setattr(p, f"{side}MemoryType", driver.CUmemorytype.CU_MEMORYTYPE_HOST)
                setattr(p, f"{side}Host", buf.ptr)
        p.WidthInBytes = nbytes
        p.Height = 1
        p.Depth = 1
        return self._add_in_context(driver.cuGraphAddMemcpyNode, "cuGraphAddMemcpyNode", p,
                                    deps)

    def _add_in_context(self, add: Any, name: str, params: Any, deps: Any) -> Any:
        """Memset and memcpy nodes name the context they run in."""
        d, n = self._deps(deps)
        return check(add(self.graph.handle, d, n, params, _current_context()), name)

    def add_host(self, fn: Callable[[], None], deps: Any = None) -> Any:
        """A host node calling `fn` (a Python callable) when the graph reaches it."""
        callback = HostCallback(lambda _data: fn())
        self._keep(callback)
        p = driver.CUDA_HOST_NODE_PARAMS()
        p.fn = ctypes.cast(callback, ctypes.c_void_p).value
        p.userData = 0
        d, n = self._deps(deps)
        return check(driver.cuGraphAddHostNode(self.graph.handle, d, n, p), "cuGraphAddHostNode")

    def add_child(self, child: Graph, deps: Any = None) -> Any:
        """Embed a copy of `child` (the driver clones it; the caller still owns `child`)."""
        d, n = self._deps(deps)
        return check(driver.cuGraphAddChildGraphNode(self.graph.handle, d, n, child.handle),
                     "cuGraphAddChildGraphNode")

    def add_event_record(self, event: Event, deps: Any = None) -> Any:
        d, n = self._deps(deps)
        return check(driver.cuGraphAddEventRecordNode(self.graph.handle, d, n, event.handle),
                     "cuGraphAddEventRecordNode")

    def add_event_wait(self, event: Event, deps: Any = None) -> Any:
        d, n = self._deps(deps)
        return check(driver.cuGraphAddEventWaitNode(self.graph.handle, d, n, event.handle),
                     "cuGraphAddEventWaitNode")

    def add_mem_alloc(self, nbytes: int, device_index: int, deps: Any = None) -> tuple[Any, int]:
        """A graph-owned allocation; returns (node, device address valid inside the graph)."""
        p = driver.CUDA_MEM_ALLOC_NODE_PARAMS()
        p.bytesize = nbytes
        p.poolProps.allocType = driver.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
        p.poolProps.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        p.poolProps.location.id = device_index
        d, n = self._deps(deps)
        node = check(driver.cuGraphAddMemAllocNode(self.graph.handle, d, n, p),
                     "cuGraphAddMemAllocNode")
        return node, int(p.dptr)

    def add_mem_free(self, dptr: int, deps: Any = None) -> Any:
        d, n = self._deps(deps)
        return check(driver.cuGraphAddMemFreeNode(self.graph.handle, d, n, dptr),
                     "cuGraphAddMemFreeNode")

    def conditional_handle(self, default: int = 1) -> Any:
        """A conditional handle whose value is `default` at each launch of the graph."""
        ctx = _current_context()
        flags = driver.CU_GRAPH_COND_ASSIGN_DEFAULT
        return check(driver.cuGraphConditionalHandleCreate(self.graph.handle, ctx, default,
                                                           flags),
                     "cuGraphConditionalHandleCreate",
                     hint="conditional nodes need driver 12.3 or newer")

    def add_while(self, handle: Any, deps: Any = None) -> tuple[Any, GraphBuilder]:
        """A conditional WHILE node; returns (node, builder of its body graph)."""
        p = driver.CUgraphNodeParams()
        p.type = driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
        p.conditional.handle = handle
        p.conditional.type = driver.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_WHILE
        p.conditional.size = 1
        p.conditional.ctx = _current_context()
        d, n = self._deps(deps)
        node = check(driver.cuGraphAddNode(self.graph.handle, d, None, n, p),
                     "cuGraphAddNode(conditional WHILE)",
                     hint="conditional nodes need driver 12.3 or newer")
        return node, GraphBuilder(_BodyGraph(p.conditional.phGraph_out[0], self.graph))


class _BodyGraph(GraphRef):
    """A conditional body: the parent graph owns the handle (destroy() only forgets it), and
    what its nodes point into is kept alive with the parent's."""

    def __init__(self, handle: Any, parent: Graph):
        super().__init__(handle)
        self._keepalive = parent._keepalive
