"""Graphs that torch.compile(mode="reduce-overhead") records, kept while graphcert watches.

PyTorch's cudagraph trees (torch/_inductor/cudagraph_trees.py) make each graph with
`torch.cuda.CUDAGraph()`, whose default keep_graph=False frees the cudaGraph_t at
capture_end(), so nothing is left to read. While `watch_torch_compile()` is open,
`torch.cuda.CUDAGraph` is a subclass that passes keep_graph=True (through __init__: the
pybind class takes it there, a __new__ override is not enough) and remembers each graph;
on exit the original class is restored and every graph still holding its cudaGraph_t is read.

    with graphcert.sources.watch_torch_compile() as watch:
        with torch.no_grad():
            for _ in range(3):
                compiled(x)
    for snap in watch.snapshots:
        print(snap.counts())

Training mode may record nothing: with backwards pending, cudagraph trees fall back to eager
("Unable to hit fast path of CUDAGraphs because of pending, uninvoked backwards"); run the
step under torch.no_grad() or torch.inference_mode() with the module in eval(), and call
torch.compiler.cudagraph_mark_step_begin() between steps. A graph constructed but never
captured is listed in `unreadable` with that reason.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphcert.errors import FrameworkMissing, GraphcertError

if TYPE_CHECKING:
    from graphcert.model import GraphSnapshot

EMPTY_GRAPH = ("captured with no nodes (cudagraph trees capture an empty graph to set up "
               "their shared memory pool)")
NEVER_CAPTURED = ("constructed but never captured (cudagraph trees ran the step eagerly: "
                  "look for torch's 'skipping cudagraphs' or 'Unable to hit fast path' "
                  "warnings; run under torch.no_grad() with the module in eval())")


@dataclass
class TorchCompileWatch:
    """The graphs made while watching; `snapshots` (graphs with work), `empty` and
    `unreadable` (each a reason) are filled on exit, or by `read()` at any time after the
    graphs are captured."""

    graphs: list[Any] = field(default_factory=list)
    snapshots: list[GraphSnapshot] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    def read(self) -> list[GraphSnapshot]:
        """Read every kept graph now; a graph that cannot be read is a reason in
        `unreadable` (never captured, or reset by PyTorch)."""
        from graphcert.sources import snapshot_of

        self.snapshots, self.empty, self.unreadable = [], [], []
        for i, graph in enumerate(self.graphs):
            name = f"torch.compile graph {i}"
            try:
                snap = snapshot_of(graph, name=name)
            except GraphcertError as exc:
                text = exc.one_line()
                why = NEVER_CAPTURED if "holds no graph" in text else text
                self.unreadable.append(f"{name}: {why}")
                continue
            if snap.node_count:
                self.snapshots.append(snap)
            else:
                self.empty.append(f"{name}: {EMPTY_GRAPH}")
        return self.snapshots


def _torch() -> Any:
    if "torch" in sys.modules:
        return sys.modules["torch"]
    try:
        import torch
    except ImportError as exc:
        raise FrameworkMissing(f"PyTorch is not installed ({exc})",
                               hint="pip install torch (a CUDA build)") from None
    return torch


def kept_graph_class(original: type, watch: TorchCompileWatch) -> type:
    """A subclass of torch's CUDAGraph that always keeps its graph and reports itself."""

    class KeptCUDAGraph(original):  # type: ignore[misc]
        def __init__(self, keep_graph: bool = False, *args: Any, **kwargs: Any) -> None:
            super().__init__(True, *args, **kwargs)
            watch.graphs.append(self)

    KeptCUDAGraph.__qualname__ = f"KeptCUDAGraph({original.__qualname__})"
    return KeptCUDAGraph


@contextmanager
def watch_torch_compile(*, read_on_exit: bool = True) -> Iterator[TorchCompileWatch]:
    """Keep every CUDA graph PyTorch makes while the block runs (torch.compile's cudagraph
    trees included) and read them on exit; torch.cuda.CUDAGraph is restored whatever
    happens. FrameworkMissing when PyTorch is not installed."""
    torch = _torch()
    watch = TorchCompileWatch()
    graphs_module = getattr(torch.cuda, "graphs", None)
    original = torch.cuda.CUDAGraph
    kept = kept_graph_class(original, watch)
    patched = [(torch.cuda, "CUDAGraph", original)]
    if graphs_module is not None and getattr(graphs_module, "CUDAGraph", None) is original:
        patched.append((graphs_module, "CUDAGraph", original))
    for owner, attr, _ in patched:
        setattr(owner, attr, kept)
    try:
        yield watch
    finally:
        for owner, attr, value in patched:
            setattr(owner, attr, value)
    if read_on_exit:
        watch.read()
