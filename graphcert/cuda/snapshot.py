"""Read a live CUDA graph into the pure model's RawGraph, then a GraphSnapshot.

Per node kind we read what the driver will tell (driver 13.0 lacks cuGraphNodeGetParams,
so a conditional node's type then comes from the DOT print and its bodies stay unread).
Pointers and handles are used only to resolve facts (a memcpy's direction); they never
reach the snapshot.
"""

from __future__ import annotations

import re
from typing import Any

from cuda.bindings import driver

from graphcert.cuda.check import check
from graphcert.cuda.graph import Graph, node_list
from graphcert.cuda.module import function_identity
from graphcert.model import GraphSnapshot, NodeKind, RawGraph, RawNode, snapshot_from_raw

T = driver.CUgraphNodeType
L = driver.CUlaunchAttributeID
M = driver.CUmemorytype


def read_snapshot(graph: Graph, meta: dict[str, Any] | None = None) -> GraphSnapshot:
    """The canonical snapshot of `graph` (nodes, edges, fingerprints)."""
    raw, _ = read_raw(graph.handle)
    return snapshot_from_raw(raw, meta=meta)


def read_snapshot_indexed(graph: Graph, meta: dict[str, Any] | None = None
                          ) -> tuple[GraphSnapshot, dict[int, int]]:
    """The snapshot plus {node handle as int: canonical index} (to name failing nodes)."""
    raw, ids = read_raw(graph.handle)
    positions: dict[int, int] = {}
    snapshot = snapshot_from_raw(raw, meta=meta, positions=positions)
    return snapshot, {handle: positions[raw_id] for handle, raw_id in ids.items()}


def read_raw(handle: Any, _dot: str | None = None) -> tuple[RawGraph, dict[int, int]]:
    """RawGraph of a CUgraph, plus {node handle as int: raw id} for naming failing nodes."""
    nodes = node_list(handle)
    ids = {int(n): i for i, n in enumerate(nodes)}
    raw_nodes = []
    dot: str | None = _dot
    for i, node in enumerate(nodes):
        ntype = check(driver.cuGraphNodeGetType(node), "cuGraphNodeGetType")
        kind = NodeKind.from_driver_type(int(ntype))
        attrs: dict[str, Any] = {}
        children: tuple[RawGraph, ...] = ()
        if kind is NodeKind.KERNEL:
            attrs = _kernel(node)
        elif kind is NodeKind.MEMSET:
            attrs = _memset(node)
        elif kind is NodeKind.MEMCPY:
            attrs = _memcpy(node)
        elif kind is NodeKind.MEM_ALLOC:
            p = check(driver.cuGraphMemAllocNodeGetParams(node), "cuGraphMemAllocNodeGetParams")
            attrs = {"bytes": int(p.bytesize)}
        elif kind is NodeKind.GRAPH:
            child = check(driver.cuGraphChildGraphNodeGetGraph(node),
                          "cuGraphChildGraphNodeGetGraph")
            children = (read_raw(child)[0],)
        elif kind is NodeKind.CONDITIONAL:
            if dot is None:
                dot = _dot_of(handle)
            attrs, children = _conditional(node, dot)
        elif kind in (NodeKind.EXT_SEMAS_SIGNAL, NodeKind.EXT_SEMAS_WAIT):
            attrs = _ext_semas(node, kind)
        elif kind is NodeKind.BATCH_MEM_OP:
            p = check(driver.cuGraphBatchMemOpNodeGetParams(node), "cuGraphBatchMemOpNodeGetParams")
            attrs = {"count": int(p.count)}
        elif kind is NodeKind.UNKNOWN:
            attrs = {"driver_type": int(ntype)}
        raw_nodes.append(RawNode(i, kind, attrs, children))
    edges = tuple((ids[int(a)], ids[int(b)]) for a, b in _edges(handle))
    return RawGraph(tuple(raw_nodes), edges), ids


def kernel_nodes(graph: Graph) -> list[Any]:
    """The top-level kernel nodes of a graph, in the driver's order."""
    kernel = T.CU_GRAPH_NODE_TYPE_KERNEL
    return [n for n in node_list(graph.handle)
            if check(driver.cuGraphNodeGetType(n), "cuGraphNodeGetType") == kernel]


def _edges(handle: Any) -> list[tuple[Any, Any]]:
    # CUDA 13's query carries edge data; asking without it would be a lossy query.
    *_, count = check(driver.cuGraphGetEdges(handle, 0), "cuGraphGetEdges")
    if count == 0:
        return []
    src, dst, _data, count = check(driver.cuGraphGetEdges(handle, count), "cuGraphGetEdges")
    return list(zip(src[:count], dst[:count], strict=False))


def _kernel(node: Any) -> dict[str, Any]:
    p = check(driver.cuGraphKernelNodeGetParams(node), "cuGraphKernelNodeGetParams")
    func = p.func
    name = None
    sizes: list[int] | None = None
    if func is not None and int(func) != 0:
        name, sizes = function_identity(func)
    elif p.kern is not None and int(p.kern) != 0:
        raw = check(driver.cuKernelGetName(p.kern), "cuKernelGetName")
        name = raw.decode() if isinstance(raw, bytes) else str(raw)
    return {
        "name": name,
        "grid": [int(p.gridDimX), int(p.gridDimY), int(p.gridDimZ)],
        "block": [int(p.blockDimX), int(p.blockDimY), int(p.blockDimZ)],
        "shared_mem_bytes": int(p.sharedMemBytes),
        "param_sizes": sizes,
        "cooperative": _launch_attr(node, L.CU_LAUNCH_ATTRIBUTE_COOPERATIVE, "cooperative", bool),
        "cluster_dim": _cluster(node),
        "priority": _launch_attr(node, L.CU_LAUNCH_ATTRIBUTE_PRIORITY, "priority", int),
    }


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


def _memset(node: Any) -> dict[str, Any]:
    p = check(driver.cuGraphMemsetNodeGetParams(node), "cuGraphMemsetNodeGetParams")
    element, width, height = int(p.elementSize), int(p.width), int(p.height)
    return {"element_size": element, "width": width, "height": height,
            "value": int(p.value), "bytes": element * width * height}


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


def _memcpy(node: Any) -> dict[str, Any]:
    p = check(driver.cuGraphMemcpyNodeGetParams(node), "cuGraphMemcpyNodeGetParams")
    src = _side(p.srcMemoryType, p.srcDevice, p.srcHost)
    dst = _side(p.dstMemoryType, p.dstDevice, p.dstHost)
    width, height, depth = int(p.WidthInBytes), int(p.Height), int(p.Depth)
    return {"direction": f"{src}to{dst}", "width_bytes": width, "height": height,
            "depth": depth, "bytes": width * max(height, 1) * max(depth, 1)}


def _ext_semas(node: Any, kind: NodeKind) -> dict[str, Any]:
    fn = (driver.cuGraphExternalSemaphoresSignalNodeGetParams if kind is NodeKind.EXT_SEMAS_SIGNAL
          else driver.cuGraphExternalSemaphoresWaitNodeGetParams)
    p = check(fn(node), fn.__name__)
    return {"count": int(p.numExtSems)}


_COND_TYPES = {"CU_GRAPH_COND_TYPE_IF": "if", "CU_GRAPH_COND_TYPE_WHILE": "while",
               "CU_GRAPH_COND_TYPE_SWITCH": "switch"}


def _conditional(node: Any, dot: str) -> tuple[dict[str, Any], tuple[RawGraph, ...]]:
    """Type and bodies via cuGraphNodeGetParams where the driver has it (not on 13.0: the
    binding raises "function not found"), else both from the driver's DOT print."""
    try:
        err, params = driver.cuGraphNodeGetParams(node)
    except RuntimeError:
        err, params = None, None
    if err is not None and int(err) == 0 and params is not None:
        c = params.conditional
        bodies = tuple(read_raw(c.phGraph_out[i])[0] for i in range(int(c.size)))
        return {"type": _COND_TYPES.get(c.type.name), "size": int(c.size),
                "bodies_read": "driver"}, bodies
    return dot_conditional(dot, int(node))


_DOT_NODE = re.compile(r'"(graph_\d+)_node_(\d+)"\s*\[[^\]]*?label="\{\s*(.*?)\}\s*"\];', re.S)
_DOT_EDGE = re.compile(r'"(graph_\d+)_node_(\d+)"\s*->\s*"(graph_\d+)_node_(\d+)"')
_DOT_KINDS = {"KERNEL": NodeKind.KERNEL, "MEMSET": NodeKind.MEMSET, "MEMCPY": NodeKind.MEMCPY,
              "HOST": NodeKind.HOST, "EMPTY": NodeKind.EMPTY, "CONDITIONAL": NodeKind.CONDITIONAL,
              "GRAPH": NodeKind.GRAPH, "EVENT_RECORD": NodeKind.EVENT_RECORD,
              "WAIT_EVENT": NodeKind.EVENT_WAIT, "MEM_ALLOC": NodeKind.MEM_ALLOC,
              "MEM_FREE": NodeKind.MEM_FREE}


def dot_conditional(dot: str, handle: int) -> tuple[dict[str, Any], tuple[RawGraph, ...]]:
    """A conditional node's type and body graphs, read from the DOT print by node handle.

    Bodies read this way carry node kinds, kernel names and launch shapes, which is what
    the fingerprints need; fields the DOT does not show stay absent.
    """
    labels = {(g, int(i)): body for g, i, body in _DOT_NODE.findall(dot)}
    wanted = f"0x{handle:016X}"
    for label in labels.values():
        if wanted.lower() in label.lower() and label.lstrip().startswith("CONDITIONAL"):
            ctype = re.search(r"Conditional Type\|\s*(\w+)", label)
            body_names = re.findall(r"\{\s*\w+\s*\|\s*(graph_\d+)\s*\}", label)
            bodies = tuple(_dot_graph(dot, labels, name) for name in body_names)
            return {"type": ctype.group(1).lower() if ctype else None, "size": len(bodies),
                    "bodies_read": "dot"}, bodies
    return {"type": None, "size": None, "bodies_read": None}, ()


def _dot_graph(dot: str, labels: dict[tuple[str, int], str], name: str) -> RawGraph:
    nodes = []
    for (graph, index), label in sorted(labels.items()):
        if graph != name:
            continue
        first = label.strip().split("\n", 1)[0].strip().split("|")[0].strip()
        kind = _DOT_KINDS.get(first, NodeKind.UNKNOWN)
        attrs: dict[str, Any] = {}
        launch = re.search(r"\|\s*([A-Za-z_][\w:]*)\\<\\<\\<([^\\]*)\\>\\>\\>", label)
        if kind is NodeKind.KERNEL and launch:
            nums = [int(v) for v in re.findall(r"\d+", launch.group(2))]
            attrs["name"] = launch.group(1)
            if len(nums) == 3:
                attrs.update(grid=[nums[0], 1, 1], block=[nums[1], 1, 1],
                             shared_mem_bytes=nums[2])
            elif len(nums) == 7:
                attrs.update(grid=nums[0:3], block=nums[3:6], shared_mem_bytes=nums[6])
        elif kind is NodeKind.CONDITIONAL:
            ctype = re.search(r"Conditional Type\|\s*(\w+)", label)
            attrs["type"] = ctype.group(1).lower() if ctype else None
        nodes.append(RawNode(index, kind, attrs))
    edges = tuple((int(a), int(b)) for ga, a, gb, b in _DOT_EDGE.findall(dot)
                  if ga == name and gb == name)
    return RawGraph(tuple(nodes), edges)


def _dot_of(handle: Any) -> str:
    g = Graph(handle)
    try:
        return g.dot()
    finally:
        g.handle = None  # borrowed handle: not ours to destroy
