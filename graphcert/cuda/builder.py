"""Graphs built node by node (not only by capture): typed adders for empty, kernel, memset,
memcpy, host, child-graph, event record/wait, mem alloc/free, batch memory operation and
conditional WHILE, IF, IF/ELSE and SWITCH nodes. External-semaphore nodes need a semaphore
imported from Vulkan, Direct3D or NvSciSync (CUDA makes none of its own): see
tools/probes/node_kinds_probe.py."""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any, Literal

from cuda.bindings import driver

from graphcert.cuda.check import check
from graphcert.cuda.graph import Graph, GraphRef
from graphcert.cuda.memory import DeviceBuffer, PinnedBuffer
from graphcert.cuda.module import DimLike, Kernel
from graphcert.cuda.stream import Event
from graphcert.cuda.types import (
    CUcontext,
    CUgraph,
    CUgraphConditionalHandle,
    CUgraphNode,
    DriverEnum,
)

Deps = Sequence[CUgraphNode] | None
"""The nodes a new node depends on (none: a root node)."""


def _current_context() -> CUcontext:
    """The calling thread's context: memset, memcpy and conditional nodes name it."""
    return CUcontext(check(driver.cuCtxGetCurrent(), "cuCtxGetCurrent"))


def _node(result: tuple[object, ...], call: str, hint: str | None = None) -> CUgraphNode:
    """check() of a cuGraphAdd*Node result: the new node."""
    node: CUgraphNode = check(result, call, hint)
    return node


# The driver calls a host node's function through this C signature (void fn(void*)).
HostCallback = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

_COND = driver.CUgraphConditionalNodeType
MemOpName = Literal["write32", "write64", "wait32", "wait64", "barrier"]
MemOp = tuple[MemOpName, int, int]
"""One operation of a batch: (name, device address, value); a barrier ignores both."""
_OPS = {"write32": driver.CUstreamBatchMemOpType.CU_STREAM_MEM_OP_WRITE_VALUE_32,
        "write64": driver.CUstreamBatchMemOpType.CU_STREAM_MEM_OP_WRITE_VALUE_64,
        "wait32": driver.CUstreamBatchMemOpType.CU_STREAM_MEM_OP_WAIT_VALUE_32,
        "wait64": driver.CUstreamBatchMemOpType.CU_STREAM_MEM_OP_WAIT_VALUE_64,
        "barrier": driver.CUstreamBatchMemOpType.CU_STREAM_MEM_OP_BARRIER}


class GraphBuilder:
    """Builds a Graph node by node. Each add_* returns the new node handle."""

    def __init__(self, graph: Graph | None = None):
        self.graph = graph if graph is not None else Graph()

    @staticmethod
    def _deps(deps: Deps) -> tuple[list[CUgraphNode], int]:
        deps = list(deps or [])
        return deps, len(deps)

    def _keep(self, obj: object) -> None:
        self.graph._keepalive.append(obj)

    def add_empty(self, deps: Deps = None) -> CUgraphNode:
        d, n = self._deps(deps)
        return _node(driver.cuGraphAddEmptyNode(self.graph.handle, d, n), "cuGraphAddEmptyNode")

    def add_kernel(self, kernel: Kernel, grid: DimLike, block: DimLike, *args: object,
                   shared: int = 0,
                   deps: Deps = None) -> CUgraphNode:
        params, packed = kernel.node_params(grid, block, *args, shared=shared)
        self._keep(packed)
        d, n = self._deps(deps)
        return _node(driver.cuGraphAddKernelNode(self.graph.handle, d, n, params),
                     f"cuGraphAddKernelNode({kernel.name})")

    def add_memset(self, buffer: DeviceBuffer | int, value: int, count: int,
                   element_size: int = 4, deps: Deps = None) -> CUgraphNode:
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
                   nbytes: int, deps: Deps = None) -> CUgraphNode:
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

    def _add_in_context(self, add: Any, name: str, params: Any, deps: Deps) -> CUgraphNode:
        """Memset and memcpy nodes name the context they run in."""
        d, n = self._deps(deps)
        return _node(add(self.graph.handle, d, n, params, _current_context()), name)

    def add_host(self, fn: Callable[[], None], deps: Deps = None) -> CUgraphNode:
        """A host node calling `fn` (a Python callable) when the graph reaches it."""
        callback = HostCallback(lambda _data: fn())
        self._keep(callback)
        p = driver.CUDA_HOST_NODE_PARAMS()
        p.fn = ctypes.cast(callback, ctypes.c_void_p).value
        p.userData = 0
        d, n = self._deps(deps)
        return _node(driver.cuGraphAddHostNode(self.graph.handle, d, n, p), "cuGraphAddHostNode")

    def add_child(self, child: Graph, deps: Deps = None) -> CUgraphNode:
        """Embed a copy of `child` (the driver clones it; the caller still owns `child`)."""
        d, n = self._deps(deps)
        return _node(driver.cuGraphAddChildGraphNode(self.graph.handle, d, n, child.handle),
                     "cuGraphAddChildGraphNode")

    def add_event_record(self, event: Event, deps: Deps = None) -> CUgraphNode:
        d, n = self._deps(deps)
        return _node(driver.cuGraphAddEventRecordNode(self.graph.handle, d, n, event.handle),
                     "cuGraphAddEventRecordNode")

    def add_event_wait(self, event: Event, deps: Deps = None) -> CUgraphNode:
        d, n = self._deps(deps)
        return _node(driver.cuGraphAddEventWaitNode(self.graph.handle, d, n, event.handle),
                     "cuGraphAddEventWaitNode")

    def add_mem_alloc(self, nbytes: int, device_index: int, deps: Deps = None
                      ) -> tuple[CUgraphNode, int]:
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

    def add_mem_free(self, dptr: int, deps: Deps = None) -> CUgraphNode:
        d, n = self._deps(deps)
        return _node(driver.cuGraphAddMemFreeNode(self.graph.handle, d, n, dptr),
                     "cuGraphAddMemFreeNode")

    def conditional_handle(self, default: int = 1) -> CUgraphConditionalHandle:
        """A conditional handle whose value is `default` at each launch of the graph."""
        ctx = _current_context()
        flags = driver.CU_GRAPH_COND_ASSIGN_DEFAULT
        handle: CUgraphConditionalHandle = check(
            driver.cuGraphConditionalHandleCreate(self.graph.handle, ctx, default, flags),
            "cuGraphConditionalHandleCreate", hint="conditional nodes need driver 12.3 or newer")
        return handle

    def add_while(self, handle: CUgraphConditionalHandle, deps: Deps = None
                  ) -> tuple[CUgraphNode, GraphBuilder]:
        """A conditional WHILE node; returns (node, builder of its body graph)."""
        node, (body,) = self.add_conditional(handle, _COND.CU_GRAPH_COND_TYPE_WHILE, 1, deps)
        return node, body

    def add_if(self, handle: CUgraphConditionalHandle, with_else: bool = False, deps: Deps = None
               ) -> tuple[CUgraphNode, list[GraphBuilder]]:
        """A conditional IF node: one body (runs when the handle is non-zero), or with
        `with_else` two (the second runs when it is zero; driver 12.8 or newer)."""
        return self.add_conditional(handle, _COND.CU_GRAPH_COND_TYPE_IF, 2 if with_else else 1,
                                    deps)

    def add_switch(self, handle: CUgraphConditionalHandle, size: int, deps: Deps = None
                   ) -> tuple[CUgraphNode, list[GraphBuilder]]:
        """A conditional SWITCH node of `size` bodies: body i runs when the handle is i,
        none when it is `size` or more (driver 12.8 or newer)."""
        return self.add_conditional(handle, _COND.CU_GRAPH_COND_TYPE_SWITCH, size, deps)

    def add_conditional(self, handle: CUgraphConditionalHandle, cond_type: DriverEnum,
                        size: int, deps: Deps = None
                        ) -> tuple[CUgraphNode, list[GraphBuilder]]:
        """A conditional node of any type; returns (node, builders of its `size` bodies)."""
        p = driver.CUgraphNodeParams()
        p.type = driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
        p.conditional.handle = handle
        p.conditional.type = cond_type
        p.conditional.size = size
        p.conditional.ctx = _current_context()
        d, n = self._deps(deps)
        name = _COND(cond_type).name.removeprefix("CU_GRAPH_COND_TYPE_")
        node = check(driver.cuGraphAddNode(self.graph.handle, d, None, n, p),
                     f"cuGraphAddNode(conditional {name}, size {size})",
                     hint="conditional nodes need driver 12.3 or newer (IF/ELSE and SWITCH: "
                          "12.8)")
        return node, [GraphBuilder(_BodyGraph(p.conditional.phGraph_out[i], self.graph))
                      for i in range(size)]

    def add_batch_mem_op(self, ops: Sequence[MemOp], deps: Deps = None) -> CUgraphNode:
        """A batch memory operation node: 32/64-bit writes and waits (wait: until the word
        is >= value, as cuStreamWaitValue's GEQ flag) on device addresses, and barriers."""
        array = []
        for name, address, value in ops:
            op = driver.CUstreamBatchMemOpParams()
            if name == "barrier":
                op.memoryBarrier.operation = _OPS[name]
                op.memoryBarrier.flags = 0  # CU_STREAM_MEMORY_BARRIER_TYPE_SYS
            elif name.startswith("write"):
                op.writeValue.operation = _OPS[name]
                op.writeValue.address = address
                setattr(op.writeValue, "value64" if name == "write64" else "value", value)
                op.writeValue.flags = 0
            else:
                op.waitValue.operation = _OPS[name]
                op.waitValue.address = address
                setattr(op.waitValue, "value64" if name == "wait64" else "value", value)
                op.waitValue.flags = int(driver.CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_GEQ)
            array.append(op)
        p = driver.CUDA_BATCH_MEM_OP_NODE_PARAMS()
        p.ctx = _current_context()
        p.count = len(array)
        p.paramArray = array
        p.flags = 0
        d, n = self._deps(deps)
        return _node(driver.cuGraphAddBatchMemOpNode(self.graph.handle, d, n, p),
                     "cuGraphAddBatchMemOpNode",
                     hint="stream memory operations must be supported by the device "
                          "(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1)")


class _BodyGraph(GraphRef):
    """A conditional body: the parent graph owns the handle (destroy() only forgets it), and
    what its nodes point into is kept alive with the parent's."""

    def __init__(self, handle: CUgraph, parent: Graph):
        super().__init__(handle)
        self._keepalive = parent._keepalive
