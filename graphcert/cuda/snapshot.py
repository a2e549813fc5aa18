"""Read a live CUDA graph into the pure model's RawGraph, then a GraphSnapshot.

One reader per node kind (READERS, keyed by NodeKind like graphcert.model.KINDS). Driver
13.0 lacks cuGraphNodeGetParams, so a conditional node's type and bodies then come from the
driver's DOT print (graphcert.model.dotread), with each body node read again through its
kind's reader by the node handle the DOT shows. Handles are used only to resolve facts (a
memcpy's direction) and never reach the snapshot; a kernel's parameter values (pointers
among them) do, as value attributes outside both fingerprints (graphcert.model.params).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any, Literal

from cuda.bindings import driver

from graphcert.cuda.check import check
from graphcert.cuda.graph import Graph, GraphRef, node_list
from graphcert.cuda.module import function_identity
from graphcert.cuda.params import Allocation, param_attrs
from graphcert.cuda.types import CUgraph, CUgraphNode, GraphNodeParams
from graphcert.errors import GraphcertError
from graphcert.model import (
    UNREAD_ATTR,
    EdgeData,
    GraphSnapshot,
    NodeKind,
    RawGraph,
    RawNode,
    snapshot_from_raw,
)
from graphcert.model.dotread import DotGraph, dot_conditional
from graphcert.model.snapshot import RawEdge

T = driver.CUgraphNodeType
L = driver.CUlaunchAttributeID
M = driver.CUmemorytype

BodiesFrom = Literal["auto", "dot"]
"""Where conditional bodies come from: "auto" (cuGraphNodeGetParams where the driver has
it, else the DOT print) or "dot" (always the DOT print: to compare both paths)."""


class _Read:
    """What one read of a graph shares: its DOT print (made once, when first needed)."""

    def __init__(self, handle: Any, bodies_from: BodiesFrom):
        self.handle = handle
        self.bodies_from = bodies_from
        self._dot: str | None = None
        self.allocations: dict[int, Allocation | None] = {}  # address -> its allocation

    @property
    def dot(self) -> str:
        if self._dot is None:
            self._dot = GraphRef(self.handle).dot()  # borrowed: never destroyed here
        return self._dot


Reader = Callable[[Any, _Read], tuple[dict[str, Any], tuple[RawGraph, ...]]]


def read_snapshot(graph: Graph, meta: dict[str, object] | None = None,
                  bodies_from: BodiesFrom = "auto") -> GraphSnapshot:
    """The canonical snapshot of `graph` (nodes, edges, fingerprints)."""
    raw, _ = read_raw(graph.handle, bodies_from=bodies_from)
    return snapshot_from_raw(raw, meta=meta)


def read_snapshot_indexed(graph: Graph, meta: dict[str, object] | None = None
                          ) -> tuple[GraphSnapshot, dict[int, int]]:
    """The snapshot plus {node handle as int: canonical index} (to name failing nodes)."""
    raw, ids = read_raw(graph.handle)
    positions: dict[int, int] = {}
    snapshot = snapshot_from_raw(raw, meta=meta, positions=positions)
    return snapshot, {handle: positions[raw_id] for handle, raw_id in ids.items()}


def read_raw(handle: CUgraph, *, bodies_from: BodiesFrom = "auto"
             ) -> tuple[RawGraph, dict[int, int]]:
    """RawGraph of a CUgraph, plus {node handle as int: raw id} for naming failing nodes."""
    nodes = node_list(handle)
    ids = {int(n): i for i, n in enumerate(nodes)}
    read = _Read(handle, bodies_from)
    raw_nodes = [_read_node(node, i, read) for i, node in enumerate(nodes)]
    edges = tuple((ids[int(a)], ids[int(b)], d) for a, b, d in _edges(handle))
    return RawGraph(tuple(raw_nodes), edges), ids


def _read_node(node: Any, raw_id: int, read: _Read) -> RawNode:
    ntype = check(driver.cuGraphNodeGetType(node), "cuGraphNodeGetType")
    kind = NodeKind.from_driver_type(int(ntype))
    if kind is NodeKind.UNKNOWN:
        return RawNode(raw_id, kind, {"driver_type": int(ntype)})
    attrs, children = READERS[kind](node, read)
    return RawNode(raw_id, kind, attrs, children)


def _edge_data(d: Any) -> EdgeData:
    def byte(v: Any) -> int:
        # cuda.bindings types these unsigned char fields as bytes in some releases
        return (v[0] if v else 0) if isinstance(v, (bytes, bytearray)) else int(v)
    return EdgeData(byte(d.type), byte(d.from_port), byte(d.to_port))


def _edges(handle: Any) -> list[tuple[Any, Any, EdgeData]]:
    # CUDA 13's query carries edge data (type, ports): part of the topology fingerprint.
    *_, count = check(driver.cuGraphGetEdges(handle, 0), "cuGraphGetEdges")
    if count == 0:
        return []
    src, dst, data, count = check(driver.cuGraphGetEdges(handle, count), "cuGraphGetEdges")
    return [(src[i], dst[i], _edge_data(data[i])) for i in range(count)]


def kernel_nodes(graph: Graph) -> list[CUgraphNode]:
    """The top-level kernel nodes of a graph, in the driver's order."""
    kernel = T.CU_GRAPH_NODE_TYPE_KERNEL
    return [n for n in node_list(graph.handle)
            if check(driver.cuGraphNodeGetType(n), "cuGraphNodeGetType") == kernel]


def _kernel(node: Any, read: _Read | None = None
            ) -> tuple[dict[str, Any], tuple[RawGraph, ...]]:
    p = check(driver.cuGraphKernelNodeGetParams(node), "cuGraphKernelNodeGetParams")
    func = p.func
    name = None
    sizes: list[int] | None = None
    kern = None
    if func is not None and int(func) != 0:
        name, sizes = function_identity(func)
    elif p.kern is not None and int(p.kern) != 0:
        kern = p.kern
        raw = check(driver.cuKernelGetName(kern), "cuKernelGetName")
        name = raw.decode() if isinstance(raw, bytes) else str(raw)
    values = param_attrs(p, func if name is not None and kern is None else None, kern,
                         read.allocations if read is not None else None)
    return {
        "name": name,
        "grid": [int(p.gridDimX), int(p.gridDimY), int(p.gridDimZ)],
        "block": [int(p.blockDimX), int(p.blockDimY), int(p.blockDimZ)],
        "shared_mem_bytes": int(p.sharedMemBytes),
        "param_sizes": sizes,
        "cooperative": _launch_attr(node, L.CU_LAUNCH_ATTRIBUTE_COOPERATIVE, "cooperative", bool),
        "cluster_dim": _cluster(node),
        "priority": _launch_attr(node, L.CU_LAUNCH_ATTRIBUTE_PRIORITY, "priority", int),
        **values,
    }, ()


def _launch_attr(node: Any, attr: Any, field: str, cast: Any) -> Any:
    err, value = driver.cuGraphKernelNodeGetAttribute(node, attr)
    return cast(getattr(value, field)) if int(err) == 0 else None


def _cluster(node: Any) -> list[int] | None:
    err, value = driver.cuGraphKernelNodeGetAttribute(node,
                                                      L.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
    if int(err) != 0:
        return None
    c = value.clusterDim
    return [int(c.x), int(c.y), int(c.z)]


def _memset(node: Any, _read: _Read | None = None
            ) -> tuple[dict[str, Any], tuple[RawGraph, ...]]:
    p = check(driver.cuGraphMemsetNodeGetParams(node), "cuGraphMemsetNodeGetParams")
    element, width, height = int(p.elementSize), int(p.width), int(p.height)
    return {"element_size": element, "width": width, "height": height,
            "value": int(p.value), "bytes": element * width * height}, ()


def _side(mem_type: Any, device_ptr: Any, host_ptr: Any) -> str:
    if mem_type == M.CU_MEMORYTYPE_HOST:
        return "H"
    if mem_type in (M.CU_MEMORYTYPE_DEVICE, M.CU_MEMORYTYPE_ARRAY):
        return "D"
    # Unified addressing: ask the driver where the pointer lives.
    ptr = int(device_ptr) or int(host_ptr or 0)
    err, where = driver.cuPointerGetAttribute(
        driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr)
    if int(err) == 0 and int(where) == int(M.CU_MEMORYTYPE_DEVICE):
        return "D"
    return "H"


def _memcpy(node: Any, _read: _Read | None = None
            ) -> tuple[dict[str, Any], tuple[RawGraph, ...]]:
    p = check(driver.cuGraphMemcpyNodeGetParams(node), "cuGraphMemcpyNodeGetParams")
    src = _side(p.srcMemoryType, p.srcDevice, p.srcHost)
    dst = _side(p.dstMemoryType, p.dstDevice, p.dstHost)
    width, height, depth = int(p.WidthInBytes), int(p.Height), int(p.Depth)
    return {"direction": f"{src}to{dst}", "width_bytes": width, "height": height,
            "depth": depth, "bytes": width * max(height, 1) * max(depth, 1)}, ()


def _ext_semas_signal(node: Any, _read: _Read | None = None
                      ) -> tuple[dict[str, Any], tuple[RawGraph, ...]]:
    p = check(driver.cuGraphExternalSemaphoresSignalNodeGetParams(node),
              "cuGraphExternalSemaphoresSignalNodeGetParams")
    return {"count": int(p.numExtSems)}, ()


def _ext_semas_wait(node: Any, _read: _Read | None = None
                    ) -> tuple[dict[str, Any], tuple[RawGraph, ...]]:
    p = check(driver.cuGraphExternalSemaphoresWaitNodeGetParams(node),
              "cuGraphExternalSemaphoresWaitNodeGetParams")
    return {"count": int(p.numExtSems)}, ()


def _mem_alloc(node: Any, _read: _Read | None = None
               ) -> tuple[dict[str, Any], tuple[RawGraph, ...]]:
    p = check(driver.cuGraphMemAllocNodeGetParams(node), "cuGraphMemAllocNodeGetParams")
    return {"bytes": int(p.bytesize)}, ()


def _batch_mem_op(node: Any, _read: _Read | None = None
                  ) -> tuple[dict[str, Any], tuple[RawGraph, ...]]:
    p = check(driver.cuGraphBatchMemOpNodeGetParams(node), "cuGraphBatchMemOpNodeGetParams")
    count = int(p.count)
    # Which operations, in order (a value: not hashed; count is the shape).
    ops = [_MEM_OPS.get(int(op.operation), "unknown") for op in _batch_ops(p, count)]
    return {"count": count, "ops": ops}, ()


class _BatchParamsLayout(ctypes.Structure):
    """CUDA_BATCH_MEM_OP_NODE_PARAMS as in cuda.h (ctx, count, paramArray, flags)."""

    _fields_ = [("ctx", ctypes.c_void_p), ("count", ctypes.c_uint),
                ("paramArray", ctypes.c_void_p), ("flags", ctypes.c_uint)]


def _batch_ops(p: Any, count: int) -> list[Any]:
    """The node's operations. cuda-bindings' paramArray getter returns only what Python set
    (its length is kept beside the struct, 0 for one the driver filled: read [] on an H100
    with 13.3), so read the driver's array pointer from the struct and wrap each element."""
    try:
        known = (ctypes.sizeof(_BatchParamsLayout)
                 == driver.sizeof(driver.CUDA_BATCH_MEM_OP_NODE_PARAMS))
        step = driver.sizeof(driver.CUstreamBatchMemOpParams)
    except (AttributeError, TypeError):  # a binding without sizeof for these structs
        known = False
    if count == 0 or not known:
        return []  # a layout we do not know: the operations unread rather than guessed
    raw = _BatchParamsLayout.from_address(int(p.getPtr()))
    if not raw.paramArray:
        return []
    # The array is owned by the node (valid while it lives and is not changed).
    return [driver.CUstreamBatchMemOpParams(_ptr=raw.paramArray + i * step)
            for i in range(count)]


_MEM_OPS = {int(v): v.name.removeprefix("CU_STREAM_MEM_OP_").lower()
            for v in driver.CUstreamBatchMemOpType}


def _child_graph(node: Any, read: _Read) -> tuple[dict[str, Any], tuple[RawGraph, ...]]:
    child = check(driver.cuGraphChildGraphNodeGetGraph(node), "cuGraphChildGraphNodeGetGraph")
    return {}, (read_raw(child, bodies_from=read.bodies_from)[0],)


def _no_fields(_node: Any, _read: _Read | None = None
               ) -> tuple[dict[str, Any], tuple[RawGraph, ...]]:
    return {}, ()


_COND_TYPES = {"CU_GRAPH_COND_TYPE_IF": "if", "CU_GRAPH_COND_TYPE_WHILE": "while",
               "CU_GRAPH_COND_TYPE_SWITCH": "switch"}


def _conditional(node: Any, read: _Read) -> tuple[dict[str, Any], tuple[RawGraph, ...]]:
    """Type and bodies via cuGraphNodeGetParams where the driver has it (not on 13.0: the
    binding raises "function not found"), else from the driver's DOT print."""
    if read.bodies_from == "auto":
        params = node_params(node)
        if params is not None:
            c = params.conditional
            bodies = tuple(read_raw(c.phGraph_out[i], bodies_from="auto")[0]
                           for i in range(int(c.size)))
            return {"type": _COND_TYPES.get(c.type.name), "size": int(c.size),
                    "bodies_read": "driver"}, bodies
    found, attrs = dot_conditional(read.dot, int(node))
    if found is None:
        return attrs, ()
    return dict(found.attrs), tuple(_body_from_dot(body, read) for body in found.children)


def node_params(node: CUgraphNode) -> GraphNodeParams | None:
    """cuGraphNodeGetParams's answer, or None where the driver lacks the call (13.0)."""
    try:
        err, params = driver.cuGraphNodeGetParams(node)
    except RuntimeError:  # "function not found" in this driver
        return None
    found: GraphNodeParams | None = (params if int(err) == 0 and params is not None
                                     else None)
    return found


def _body_from_dot(body: DotGraph, read: _Read) -> RawGraph:
    """A body as the DOT shows it, each node read again through its kind's reader by the
    handle the DOT printed (fields the DOT lacks: param sizes, cluster dims, ...), and the
    edges with their data from the driver. What the driver will not give stays as the DOT
    showed it, with the fields it lacks under `unread`."""
    nodes: list[RawNode] = []
    handles: dict[int, int] = {n.handle: n.index for n in body.nodes if n.handle}
    edges: list[RawEdge] = list(body.edges)
    from_driver = True
    for dn in body.nodes:
        kind, attrs = dn.kind, dict(dn.attrs)
        children = tuple(_body_from_dot(c, read) for c in dn.children)
        try:
            if not dn.handle:
                raise GraphcertError("no node handle in the DOT print")
            handle = driver.CUgraphNode(dn.handle)
            # The driver's word on the kind, not the DOT's label.
            number = int(check(driver.cuGraphNodeGetType(handle), "cuGraphNodeGetType"))
            kind = NodeKind.from_driver_type(number)
            if kind is NodeKind.UNKNOWN:
                attrs = {"driver_type": number}
            elif kind is not NodeKind.CONDITIONAL:  # its bodies: from the DOT, above
                got, kids = READERS[kind](handle, read)
                attrs = {**{k: v for k, v in attrs.items() if k != UNREAD_ATTR}, **got}
                children = kids or children
        except (GraphcertError, RuntimeError):
            kind, from_driver = dn.kind, False
        nodes.append(RawNode(dn.index, kind, attrs, children))
    if from_driver and len(handles) == len(body.nodes):
        try:
            edges = [(handles[a], dn.index, d) for dn in body.nodes
                     for a, d in _dependencies(driver.CUgraphNode(dn.handle))]
        except (GraphcertError, RuntimeError, KeyError):
            edges = list(body.edges)
    return RawGraph(tuple(nodes), tuple(edges))


def _dependencies(node: Any) -> list[tuple[int, EdgeData]]:
    """(predecessor handle, edge data) of a node (CUDA 13 signature, with edge data)."""
    *_, count = check(driver.cuGraphNodeGetDependencies(node, 0), "cuGraphNodeGetDependencies")
    if count == 0:
        return []
    deps, data, count = check(driver.cuGraphNodeGetDependencies(node, count),
                              "cuGraphNodeGetDependencies")
    return [(int(deps[i]), _edge_data(data[i])) for i in range(count)]


READERS: dict[NodeKind, Reader] = {
    NodeKind.KERNEL: _kernel,
    NodeKind.MEMCPY: _memcpy,
    NodeKind.MEMSET: _memset,
    NodeKind.HOST: _no_fields,
    NodeKind.GRAPH: _child_graph,
    NodeKind.EMPTY: _no_fields,
    NodeKind.EVENT_WAIT: _no_fields,
    NodeKind.EVENT_RECORD: _no_fields,
    NodeKind.EXT_SEMAS_SIGNAL: _ext_semas_signal,
    NodeKind.EXT_SEMAS_WAIT: _ext_semas_wait,
    NodeKind.MEM_ALLOC: _mem_alloc,
    NodeKind.MEM_FREE: _no_fields,
    NodeKind.BATCH_MEM_OP: _batch_mem_op,
    NodeKind.CONDITIONAL: _conditional,
}
"""One reader per node kind (UNKNOWN records its driver number instead)."""
