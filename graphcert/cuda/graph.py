"""CUDA graphs with owned handles (and GraphRef, a graph borrowed from someone else): capture
in three modes, explicit build, instantiate, upload, launch, exec update with the failing
node, kernel-node set-params, DOT print."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cuda.bindings import driver

from graphcert.cuda.check import check, error_for
from graphcert.cuda.module import PackedArgs, param_layout
from graphcert.cuda.owned import Borrowed, Owned
from graphcert.cuda.params import param_bytes
from graphcert.cuda.stream import Stream
from graphcert.cuda.types import CUgraph, CUgraphExec, CUgraphNode, KernelNodeParams
from graphcert.errors import CaptureError, CudaError

CAPTURE_MODES = {
    "global": driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL,
    "thread-local": driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
    "relaxed": driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED,
}

_UPDATE_REASONS = {
    "CU_GRAPH_EXEC_UPDATE_SUCCESS": None,
    "CU_GRAPH_EXEC_UPDATE_ERROR": "the update failed for a reason the driver does not name",
    "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED": "the graph topology changed: re-instantiate",
    "CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED": "a node changed kind: re-instantiate",
    "CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED": "a kernel node changed function",
    "CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED": "a node's parameters changed in a way "
                                                     "update cannot apply",
    "CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED": "this node kind cannot be updated",
    "CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE": "the kernel function change is "
                                                              "not supported",
    "CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED": "a node's launch attributes changed",
}


@dataclass(frozen=True)
class UpdateResult:
    """What cuGraphExecUpdate said: result name, the failing node (a graph node handle of
    the new graph, as an int) and a reason in words."""

    ok: bool
    result: str
    failing_node: int | None
    reason: str | None

    @property
    def topology_changed(self) -> bool:
        """True when the fix is to re-instantiate, not an error in the call itself."""
        return self.result in ("topology_changed", "node_type_changed", "function_changed",
                               "unsupported_function_change")


class Graph(Owned):
    """An owned CUgraph. Destroyed on destroy() or leaving a `with` block."""

    def __init__(self, handle: CUgraph | None = None):
        self.handle = handle if handle is not None else check(driver.cuGraphCreate(0),
                                                              "cuGraphCreate")
        self._keepalive: list[Any] = []  # packed args and callbacks the nodes point into

    def node_handles(self) -> list[CUgraphNode]:
        return node_list(self.handle)

    def instantiate(self) -> GraphExec:
        exe = GraphExec(check(driver.cuGraphInstantiate(self.handle, 0), "cuGraphInstantiate"))
        exe.source_shape = graph_size(self.handle)
        exe.source_kinds = node_kinds(self.handle)
        return exe

    def dot(self, verbose: bool = True) -> str:
        """The driver's DOT description of the graph."""
        flags = (driver.CUgraphDebugDot_flags.CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE if verbose else 0)
        fd, path = tempfile.mkstemp(suffix=".dot")
        os.close(fd)
        try:
            check(driver.cuGraphDebugDotPrint(self.handle, path.encode(), int(flags)),
                  "cuGraphDebugDotPrint")
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        finally:
            os.unlink(path)

    def _free(self, handle: Any) -> None:
        check(driver.cuGraphDestroy(handle), "cuGraphDestroy")
        self._keepalive.clear()


class GraphRef(Borrowed, Graph):
    """A CUgraph someone else owns (a framework's graph, a graph being read): every Graph
    method, and destroy() leaves the graph as it is."""

    def __init__(self, handle: CUgraph):
        if handle is None:
            raise ValueError("GraphRef borrows an existing CUgraph; Graph() makes a new one")
        super().__init__(handle)


class GraphExec(Owned):
    """An owned CUgraphExec."""

    def __init__(self, handle: CUgraphExec):
        self.handle = handle
        # What it was instantiated from: (nodes, edges) and node kinds in the driver's order,
        # to explain updates the driver refuses without naming a reason or a node.
        self.source_shape: tuple[int, int] | None = None
        self.source_kinds: list[str] | None = None

    def upload(self, stream: Stream) -> None:
        check(driver.cuGraphUpload(self.handle, stream.handle), "cuGraphUpload")

    def launch(self, stream: Stream) -> None:
        err = driver.cuGraphLaunch(self.handle, stream.handle)[0]
        if int(err) != 0:
            check(err, "cuGraphLaunch")

    def update(self, graph: Graph) -> UpdateResult:
        """cuGraphExecUpdate from `graph`; a refused update is a result, not an exception."""
        err, info = driver.cuGraphExecUpdate(self.handle, graph.handle)
        name = info.result.name if info is not None else "CU_GRAPH_EXEC_UPDATE_ERROR"
        code = int(err)
        if code not in (0, int(driver.CUresult.CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)):
            raise error_for(err, "cuGraphExecUpdate")
        failing = None
        if info is not None and info.errorNode is not None and int(info.errorNode) != 0:
            failing = int(info.errorNode)
        short = name.replace("CU_GRAPH_EXEC_UPDATE_", "").replace("ERROR_", "").lower()
        reason = _UPDATE_REASONS.get(name, name)
        if short == "error" and self.source_shape is not None:
            # Driver 13.0 answers a changed node or edge count with the generic ERROR and no
            # node; counting tells the user it is a topology change, fixed by re-instantiating.
            new = graph_size(graph.handle)
            if new != self.source_shape:
                short = "topology_changed"
                reason = (f"the graph topology changed ({self.source_shape[0]} nodes, "
                          f"{self.source_shape[1]} edges instantiated; {new[0]} nodes, {new[1]} "
                          f"edges now; the driver said only CU_GRAPH_EXEC_UPDATE_ERROR): "
                          f"re-instantiate")
            elif self.source_kinds is not None:
                kinds = node_kinds(graph.handle)
                diff = [i for i, (a, b) in enumerate(zip(self.source_kinds, kinds, strict=True))
                        if a != b]
                if diff:
                    short = "node_type_changed"
                    failing = int(graph.node_handles()[diff[0]])
                    reason = (f"node {diff[0]} (in creation order) changed kind "
                              f"{self.source_kinds[diff[0]]} -> {kinds[diff[0]]}: re-instantiate")
        return UpdateResult(code == 0 and name == "CU_GRAPH_EXEC_UPDATE_SUCCESS", short,
                            failing, reason)

    def set_kernel_params(self, node: CUgraphNode, params: KernelNodeParams) -> None:
        """cuGraphExecKernelNodeSetParams: new arguments/geometry, no re-instantiation."""
        check(driver.cuGraphExecKernelNodeSetParams(self.handle, node, params),
              "cuGraphExecKernelNodeSetParams")

    def set_kernel_argument(self, node: CUgraphNode, index: int, value: int) -> None:
        """Change one integer argument of a kernel node in this exec, keeping the others
        (read back from the graph's node) and its launch geometry: no re-capture."""
        params, args = kernel_node_arguments(node)
        size = len(args[index])
        args[index] = int(value).to_bytes(size, "little", signed=value < 0)
        packed = PackedArgs(args)
        params.kernelParams = packed.address
        params.extra = 0
        self.set_kernel_params(node, params)  # the driver copies the arguments here

    def set_node_enabled(self, node: int, enabled: bool) -> None:
        """cuGraphNodeSetEnabled: turn template node `node` (its handle as an int) of the graph
        this exec was instantiated from into a no-op in this exec, or back; its dependencies
        stay. The driver refuses every kind but kernel, memcpy and memset nodes."""
        check(driver.cuGraphNodeSetEnabled(self.handle, driver.CUgraphNode(node), int(enabled)),
              "cuGraphNodeSetEnabled")

    def _free(self, handle: Any) -> None:
        check(driver.cuGraphExecDestroy(handle), "cuGraphExecDestroy")


def graph_size(handle: CUgraph) -> tuple[int, int]:
    """(node count, edge count) of a CUgraph."""
    nodes = check(driver.cuGraphGetNodes(handle, 0), "cuGraphGetNodes")[1]
    edges = check(driver.cuGraphGetEdges(handle, 0), "cuGraphGetEdges")[-1]
    return int(nodes), int(edges)


def node_list(handle: CUgraph) -> list[CUgraphNode]:
    """A CUgraph's nodes in the driver's (creation) order."""
    _, count = check(driver.cuGraphGetNodes(handle, 0), "cuGraphGetNodes")
    if count == 0:
        return []
    nodes, count = check(driver.cuGraphGetNodes(handle, count), "cuGraphGetNodes")
    return list(nodes[:count])


def node_kinds(handle: CUgraph) -> list[str]:
    """Node kinds of a CUgraph in the driver's (creation) order."""
    return [check(driver.cuGraphNodeGetType(n), "cuGraphNodeGetType").name
            for n in node_list(handle)]


def kernel_node_arguments(node: CUgraphNode) -> tuple[KernelNodeParams, list[bytes]]:
    """A kernel node's params struct and the bytes of each argument as the graph holds them."""
    params = check(driver.cuGraphKernelNodeGetParams(node), "cuGraphKernelNodeGetParams")
    layout = param_layout(params.func)
    if not layout:
        return params, []
    got = param_bytes(params, layout)
    if isinstance(got, str):
        raise CudaError("cuGraphKernelNodeGetParams", 0, "NO_KERNEL_PARAMS",
                        f"the node's arguments are not readable ({got})")
    return params, got


def capture(stream: Stream, record: Callable[[], None], mode: str = "global") -> Graph:
    """Record what `record()` enqueues on `stream` into a new Graph.

    If anything inside the recording fails, the capture is ended, the partial graph is
    destroyed, the stream is left usable, and CaptureError names the call that broke it.
    """
    if mode not in CAPTURE_MODES:
        raise ValueError(f"capture mode {mode!r}: use one of {', '.join(CAPTURE_MODES)}")
    check(driver.cuStreamBeginCapture(stream.handle, CAPTURE_MODES[mode]), "cuStreamBeginCapture")
    try:
        record()
    except BaseException as exc:
        _abandon_capture(stream)
        if isinstance(exc, CudaError):
            raise CaptureError(
                f"capture ({mode} mode) broken by {exc.call}: {exc.name}",
                broken_by=exc.call, hint=exc.hint) from exc
        if isinstance(exc, Exception):
            raise CaptureError(
                f"capture ({mode} mode) broken: the recording raised "
                f"{type(exc).__name__}: {exc}", broken_by=type(exc).__name__,
                hint="allocate outputs and temporaries in setup(), or use --mode relaxed",
            ) from exc
        raise
    err, graph = driver.cuStreamEndCapture(stream.handle)
    if int(err) != 0:
        if graph is not None and int(graph) != 0:
            driver.cuGraphDestroy(graph)
        cause = error_for(err, "cuStreamEndCapture")
        raise CaptureError(f"capture ({mode} mode) was invalidated: {cause.name}",
                           broken_by="cuStreamEndCapture", hint=cause.hint)
    return Graph(graph)


def _abandon_capture(stream: Stream) -> None:
    """End a capture that failed and destroy whatever partial graph it produced."""
    err, graph = driver.cuStreamEndCapture(stream.handle)
    if graph is not None and int(graph) != 0:
        driver.cuGraphDestroy(graph)
