"""Which kind of graph object this is, and the CUgraph address inside it. Pure: no framework
and no CUDA import; types are recognised by the module and name of their classes, so
graphcert never imports torch, CuPy or cuda.core unless the caller already has."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from graphcert.errors import InputError, first_line

TAKES = ("torch.cuda.CUDAGraph(keep_graph=True), cupy.cuda.Graph, a cuda.core GraphBuilder "
         "(after end_building()) or GraphDefinition, a cuda.bindings CUgraph, or a CUgraph "
         "address (int)")


@dataclass(frozen=True)
class GraphRef:
    """A CUgraph address and where it came from. `owner` keeps the object holding the graph
    alive while it is read."""

    address: int
    source: str
    framework: str | None = None
    device: int | None = None
    owner: Any = field(default=None, repr=False, compare=False)


class _HasHandle(Protocol):
    handle: object  # the CUgraph, an int()-able driver object


def type_name(obj: object) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def _is(obj: Any, package: str, *names: str) -> str | None:
    """The matching class name when obj's class, or a base of it, is `package`.NAME."""
    for cls in type(obj).__mro__:
        module = getattr(cls, "__module__", "") or ""
        if (module == package or module.startswith(package + ".")) and cls.__name__ in names:
            return cls.__name__
    return None


def _version(package: str) -> str | None:
    module = sys.modules.get(package)
    version = getattr(module, "__version__", None)
    return f"{package} {version}" if version else None


def _device(fn: Any) -> int | None:
    """Best effort: the framework's current device, only for choosing a context when none is
    current on this thread."""
    try:
        value = fn()
        return int(value) if value is not None else None
    except Exception:  # a missing attribute or an uninitialised framework: use the default
        return None


def _address(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise InputError(f"{what} gave {value!r}, not a CUgraph handle")
    try:
        address = int(value)
    except (TypeError, ValueError):
        raise InputError(f"{what} gave a {type_name(value)}, not a CUgraph handle") from None
    if address == 0:
        raise InputError(f"{what} holds no graph (its CUgraph handle is 0)",
                         hint="capture or build the graph before taking its snapshot")
    if not 0 < address < 1 << 64:
        raise InputError(f"{what} gave {address}, which is not a CUgraph address")
    return address


def graph_ref(obj: object) -> GraphRef:
    """Recognise `obj` and find its CUgraph; InputError (one line) naming the type otherwise."""
    if isinstance(obj, int) and not isinstance(obj, bool):
        return GraphRef(_address(obj, "the address"), "address", owner=obj)
    if _is(obj, "torch", "CUDAGraph", "_CUDAGraph"):
        return _torch(obj)
    if _is(obj, "cupy", "Graph"):
        cupy = sys.modules.get("cupy")
        return GraphRef(_address(_attr(obj, "graph", "cupy.cuda.Graph"), "cupy.cuda.Graph.graph"),
                        "cupy.cuda.Graph", _version("cupy"),
                        _device(lambda: cupy.cuda.runtime.getDevice()),  # type: ignore[union-attr]
                        owner=obj)
    core = _is(obj, "cuda.core", "GraphBuilder", "GraphDefinition", "Graph")
    if core:
        return _cuda_core(obj, core)
    bindings = _is(obj, "cuda.bindings", "CUgraph", "cudaGraph_t", "CUgraphExec",
                   "cudaGraphExec_t")
    if bindings in ("CUgraphExec", "cudaGraphExec_t"):
        raise InputError(f"a {bindings} is an executable graph: the driver cannot list its "
                         "nodes", hint="pass the CUgraph it was instantiated from")
    if bindings:
        return GraphRef(_address(obj, f"the {bindings}"), f"cuda.bindings {bindings}", owner=obj)
    if _is(obj, "graphcert.cuda", "Graph"):
        # A graphcert.cuda Graph, known by its class name: this module imports no CUDA.
        graph = cast("_HasHandle", obj)
        return GraphRef(_address(graph.handle, "graphcert Graph"), "graphcert Graph",
                        owner=obj)
    raise InputError(f"graphcert cannot read a {type_name(obj)}: it takes {TAKES}")


def _attr(obj: Any, name: str, what: str) -> Any:
    try:
        return getattr(obj, name)
    except AttributeError:
        raise InputError(f"this {what} ({type_name(obj)}) has no .{name}",
                         hint="upgrade the library, or pass the CUgraph handle itself") from None


def _torch(obj: Any) -> GraphRef:
    what = "torch.cuda.CUDAGraph"
    raw = _attr(obj, "raw_cuda_graph", what)
    try:
        handle = raw()
    except RuntimeError as exc:
        if "keep_graph" in str(exc):
            raise InputError(
                f"this {what} was captured without keep_graph=True, so PyTorch no longer "
                "holds its graph",
                hint="create it as torch.cuda.CUDAGraph(keep_graph=True), capture again, "
                     "then take the snapshot (before or after g.instantiate())") from None
        raise InputError(f"PyTorch could not hand over the graph: {first_line(exc)}",
                         hint="take the snapshot after the capture has ended") from None
    torch = sys.modules.get("torch")
    return GraphRef(_address(handle, f"{what}.raw_cuda_graph()"), what, _version("torch"),
                    _device(lambda: torch.cuda.current_device()),  # type: ignore[union-attr]
                    owner=obj)


def _cuda_core(obj: Any, name: str) -> GraphRef:
    if name == "Graph":
        raise InputError("a cuda.core Graph is an executable graph (CUgraphExec): the driver "
                         "cannot list its nodes",
                         hint="take the snapshot of the GraphBuilder (after end_building()) "
                              "or of builder.graph_definition")
    definition = obj
    if name == "GraphBuilder":
        try:
            definition = obj.graph_definition
        except AttributeError:
            raise InputError("this cuda.core GraphBuilder has no graph_definition",
                             hint="upgrade cuda-core (1.2 has it)") from None
        except RuntimeError as exc:
            raise InputError(f"the cuda.core GraphBuilder has no graph yet: {first_line(exc)}",
                             hint="call builder.end_building() first") from None
    handle = _attr(definition, "handle", f"cuda.core {name}")
    device = _device(lambda: obj.stream.device.device_id) if name == "GraphBuilder" else None
    return GraphRef(_address(handle, f"cuda.core {name}"), f"cuda.core {name}",
                    _version("cuda.core"), device, owner=(obj, definition))
