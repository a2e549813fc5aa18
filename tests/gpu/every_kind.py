"""One explicitly built graph holding every node kind the builder supports, shared by the
builder test (launch it, check each effect) and the snapshot test (read every field back)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from graphcert.cuda.builder import GraphBuilder
from graphcert.cuda.context import RunContext
from graphcert.cuda.stream import Event

N = 1024  # u32 elements copied through the graph-owned allocation


@dataclass
class EveryKind:
    builder: GraphBuilder
    child: GraphBuilder
    event: Event
    buffers: dict[str, Any]
    host_calls: list[int] = field(default_factory=list)

    def close(self, ctx: RunContext) -> None:
        self.builder.graph.destroy()
        self.child.graph.destroy()
        self.event.destroy()
        ctx.release_buffers()


def build_every_kind(ctx: RunContext, kernels: Path) -> EveryKind:
    """mem alloc -> memset -> kernel (copy) -> {mem free, memcpy DtoH -> host -> child graph ->
    event record -> event wait -> WHILE (countdown from 5)} -> empty."""
    copy = ctx.kernel(kernels, "t_copy_u32")
    inc = ctx.kernel(kernels, "t_increment")
    countdown = ctx.kernel(kernels, "t_countdown")
    bufs = {"out": ctx.alloc(4 * N), "host_out": ctx.pinned(4 * N),
            "counter": ctx.upload(np.zeros(1, dtype=np.uint32)),
            "loop": ctx.upload(np.array([5], dtype=np.uint32)),
            "iterations": ctx.upload(np.zeros(1, dtype=np.uint32))}
    graph = EveryKind(GraphBuilder(), GraphBuilder(), Event(timing=False), bufs)
    graph.child.add_kernel(inc, 1, 1, bufs["counter"])
    b = graph.builder
    wait, free = add_front(graph, ctx, copy, shared=128)
    handle = b.conditional_handle(default=1)
    cond, body = b.add_while(handle, deps=[wait])
    body.add_kernel(countdown, 1, 1, bufs["loop"], bufs["iterations"], np.uint64(int(handle)))
    b.add_empty(deps=[cond, free])
    return graph


def add_front(graph: EveryKind, ctx: RunContext, copy: Any, shared: int = 0) -> tuple[Any, Any]:
    """mem alloc -> memset -> kernel (copy, `shared` bytes) -> {mem free, memcpy DtoH -> host
    -> child graph -> event record -> event wait}; returns (event wait node, mem free node).
    Needs buffers "out" (4 * N bytes) and "host_out" (pinned) and the child graph built."""
    b, bufs = graph.builder, graph.buffers
    alloc, scratch = b.add_mem_alloc(4 * N, ctx.device.index)
    fill = b.add_memset(scratch, 7, N, deps=[alloc])
    cp = b.add_kernel(copy, (N // 256, 1, 1), (256, 1, 1), np.uint64(scratch), bufs["out"],
                      np.uint32(N), shared=shared, deps=[fill])
    free = b.add_mem_free(scratch, deps=[cp])
    back = b.add_memcpy(bufs["host_out"], bufs["out"], 4 * N, deps=[cp])
    host = b.add_host(lambda: graph.host_calls.append(1), deps=[back])
    sub = b.add_child(graph.child.graph, deps=[host])
    rec = b.add_event_record(graph.event, deps=[sub])
    return b.add_event_wait(graph.event, deps=[rec]), free
