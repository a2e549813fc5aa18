"""Owned driver handles (graph, exec, stream, event, module, device and pinned buffers) are
freed once, by their own destroy call; borrowed references (a framework's graph or stream,
a conditional body its parent owns) never are. No GPU: the driver's create and destroy calls
are fakes that log."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import pytest
from cuda.bindings import driver

from graphcert.cuda import handles
from graphcert.cuda.builder import _BodyGraph
from graphcert.cuda.graph import Graph, GraphExec, GraphRef
from graphcert.cuda.memory import DeviceBuffer, PinnedBuffer
from graphcert.cuda.module import Module
from graphcert.cuda.owned import Owned
from graphcert.cuda.stream import Event, Stream, StreamRef

FREES = ("cuGraphDestroy", "cuGraphExecDestroy", "cuStreamDestroy", "cuEventDestroy",
         "cuModuleUnload", "cuMemFree", "cuMemFreeHost")
MAKES = {"cuGraphCreate": "graph", "cuStreamCreate": "stream", "cuEventCreate": "event",
         "cuMemAlloc": 4096, "cuMemHostAlloc": 8192, "cuModuleLoadData": "module"}


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    log: list[str] = []

    def fake(name: str, *value: Any) -> Callable[..., tuple[Any, ...]]:
        def call(*args: Any) -> tuple[Any, ...]:
            log.append(name)
            return (0, *value)
        return call

    for name in FREES:
        monkeypatch.setattr(driver, name, fake(name))
    for name, value in MAKES.items():
        monkeypatch.setattr(driver, name, fake(name, value))
    return log


def test_each_owned_handle_is_freed_once_by_its_own_call(calls: list[str]) -> None:
    made: list[tuple[Owned, str]] = [
        (Graph(), "cuGraphDestroy"), (GraphExec("exec"), "cuGraphExecDestroy"),
        (Stream(), "cuStreamDestroy"), (Event(), "cuEventDestroy"),
        (Module(b"cubin"), "cuModuleUnload"), (DeviceBuffer(16), "cuMemFree"),
        (PinnedBuffer(16), "cuMemFreeHost")]
    for owned, call in made:
        with owned:
            pass
        owned.destroy()  # a second time: nothing
        assert owned.handle is None and calls.count(call) == 1, call
    buffer, module = DeviceBuffer(16), Module(b"cubin")
    for release in (buffer.free, buffer.free, module.unload, module.unload):
        release()  # the names their callers use, once each in effect
    assert calls.count("cuMemFree") == 2 and calls.count("cuModuleUnload") == 2


def test_a_graph_frees_what_its_nodes_point_into_with_it(calls: list[str]) -> None:
    graph = Graph()
    graph._keepalive.append(b"packed arguments")
    graph.destroy()
    assert graph._keepalive == [] and calls == ["cuGraphCreate", "cuGraphDestroy"]


def test_a_borrowed_reference_never_frees(calls: list[str]) -> None:
    parent = Graph()
    parent._keepalive.append(b"packed arguments")
    body = _BodyGraph("body-graph", parent)
    stream = Stream.borrow(0x1234)
    assert isinstance(stream, StreamRef) and stream.address == 0x1234
    for ref in (GraphRef("framework-graph"), stream, body):
        with ref:
            pass
        ref.destroy()
        assert ref.handle is None
    assert calls == ["cuGraphCreate"]  # the parent's; nothing destroyed
    assert parent._keepalive == [b"packed arguments"]  # the body shares the parent's


def test_a_borrowed_graph_needs_a_handle() -> None:
    with pytest.raises(ValueError, match="borrows an existing CUgraph"):
        GraphRef(None)


def test_a_foreign_graph_is_read_and_never_destroyed(monkeypatch: pytest.MonkeyPatch,
                                                     calls: list[str]) -> None:
    read: list[Graph] = []

    def fail(graph: Graph, meta: Any = None) -> Any:
        read.append(graph)
        raise RuntimeError("synthetic: the read failed")

    monkeypatch.setattr(handles, "current_context", lambda device=None: nullcontext())
    monkeypatch.setattr(handles, "read_snapshot", fail)
    with pytest.raises(RuntimeError, match="synthetic"):
        handles.read_foreign_graph(0x5678)
    [graph] = read
    assert isinstance(graph, GraphRef) and calls == []
