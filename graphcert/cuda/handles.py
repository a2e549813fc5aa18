"""Graphs graphcert does not own: a CUgraph from an address, read with a context current.

Frameworks (PyTorch, CuPy, cuda.core) run in the primary context of their device and leave
it current on the thread that used them; graphcert reads their graphs in that context. On a
thread with no current context the primary context of `device` is retained for the read and
released after, so the framework's own reference count is left as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from cuda.bindings import driver

from graphcert.cuda.check import check, load_driver
from graphcert.cuda.device import graph_memory_attributes
from graphcert.cuda.graph import GraphRef
from graphcert.cuda.params import dangling_pointers
from graphcert.cuda.snapshot import read_snapshot
from graphcert.cuda.types import CUgraph
from graphcert.errors import InputError
from graphcert.model import GraphSnapshot
from graphcert.model.params import DanglingPointer

_MAX_ADDRESS = (1 << 64) - 1


def graph_from_address(address: int) -> CUgraph:
    """The `cuda.bindings.driver.CUgraph` for an integer handle address (not owned)."""
    if isinstance(address, bool) or not isinstance(address, int):
        raise InputError(f"a CUgraph address must be an int, not {type(address).__name__}")
    if not 0 < address <= _MAX_ADDRESS:
        raise InputError(f"{address:#x} is not a CUgraph address",
                         hint="pass the graph object itself, or the non-zero handle it reports")
    graph: CUgraph = driver.CUgraph(address)
    return graph


@contextmanager
def current_context(device: int | None = None) -> Iterator[None]:
    """Keep the thread's current context; with none, hold device's primary context."""
    load_driver()
    ctx = check(driver.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if ctx is not None and int(ctx) != 0:
        yield
        return
    dev = check(driver.cuDeviceGet(device or 0), "cuDeviceGet")
    primary = check(driver.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    try:
        check(driver.cuCtxSetCurrent(primary), "cuCtxSetCurrent")
        try:
            yield
        finally:
            check(driver.cuCtxSetCurrent(driver.CUcontext(0)), "cuCtxSetCurrent")
    finally:
        check(driver.cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease")


def prepare_reader() -> None:
    """The reader's one-time work before the first read: cuda.bindings' driver symbols
    (cuInit through it) and the thread's current context looked up once. Importing this
    module already imported cuda.bindings and the readers."""
    load_driver()
    check(driver.cuCtxGetCurrent(), "cuCtxGetCurrent")


def read_foreign_graph(address: int, *, meta: dict[str, object] | None = None,
                       device: int | None = None) -> GraphSnapshot:
    """The snapshot of a CUgraph someone else owns (its address); the graph is not changed
    or destroyed. A kernel parameter that pointed into device memory and no longer lies in
    a live allocation is named in the snapshot's notes (a replay would use freed memory)."""
    handle = graph_from_address(address)
    with current_context(device):
        snapshot = read_snapshot(GraphRef(handle), meta=meta)  # a framework's: never destroyed
        dangling = dangling_pointers(snapshot)
    if not dangling:
        return snapshot
    return replace(snapshot, notes=(*snapshot.notes, *(f"dangling pointer: {d.line()}"
                                                       for d in dangling)))


def dangling_pointers_in(snapshot: GraphSnapshot, device: int | None = None
                         ) -> tuple[DanglingPointer, ...]:
    """graphcert.cuda.params.dangling_pointers with a context current (the thread's, else
    device's primary context): call it before replaying the graph `snapshot` was read from."""
    with current_context(device):
        return dangling_pointers(snapshot)


def graph_memory_of(device: int = 0) -> dict[str, int]:
    """The driver's graph memory attributes of device number `device` (used/reserved,
    current/high): memory held by graphs' own allocation nodes, whoever captured them."""
    load_driver()
    return graph_memory_attributes(check(driver.cuDeviceGet(device), "cuDeviceGet"))
