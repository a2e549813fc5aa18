"""Graphs made elsewhere -> snapshots: PyTorch CUDAGraph, CuPy Graph, cuda.core GraphBuilder or
GraphDefinition, a cuda.bindings CUgraph or its address.

Recognising the object (graphcert.sources.detect) imports nothing; reading it goes through
the same reader as graphcert's own graphs (graphcert.cuda.handles), so inventory, diff and
the gate work on the result unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphcert.sources.detect import TAKES, GraphRef, graph_ref

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from graphcert.model import GraphSnapshot
    from graphcert.sources.torch_compile import TorchCompileWatch


def snapshot_of(obj: object, *, name: str | None = None) -> GraphSnapshot:
    """The snapshot of a graph made by PyTorch, CuPy, cuda.core or the driver API.

    `name` goes into the snapshot's meta (not hashed). Raises InputError (one line) for an
    object graphcert cannot read, NoDriverError where there is no CUDA driver."""
    ref = graph_ref(obj)
    meta: dict[str, object] = {"source": ref.source}
    if name is not None:
        meta["name"] = name
    if ref.framework:
        meta["framework"] = ref.framework
    from graphcert.cuda.handles import read_foreign_graph

    snapshot = read_foreign_graph(ref.address, meta=meta, device=ref.device)
    del ref  # the owner stayed alive until the read was done
    return snapshot


def prepare_reader() -> None:
    """Do graphcert's one-time reader set-up now (import cuda.bindings and the readers,
    initialise the driver bindings, import python-igraph for the canonical order), so that
    timings of the first snapshot hold only reading it. NoDriverError without a driver."""
    from graphcert.cuda.handles import prepare_reader as prepare
    from graphcert.model.canonical import warm

    prepare()
    warm()


def watch_torch_compile(*, read_on_exit: bool = True
                        ) -> AbstractContextManager[TorchCompileWatch]:
    """A context manager that keeps the graphs torch.compile(mode="reduce-overhead") records
    while it is open and reads them on exit (see graphcert.sources.torch_compile)."""
    from graphcert.sources.torch_compile import watch_torch_compile as watch

    return watch(read_on_exit=read_on_exit)


__all__ = ["TAKES", "GraphRef", "graph_ref", "prepare_reader", "snapshot_of",
           "watch_torch_compile"]
