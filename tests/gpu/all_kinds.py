"""One explicitly built graph holding every node kind the builder can make (12 of CUDA's 14:
not the external-semaphore kinds, which need a semaphore from Vulkan, Direct3D or NvSciSync),
with nested bodies. Shared by the GPU tests and tools/record_every_kind.py (which records
its snapshot for tests/fixtures/).

    mem alloc -> memset -> kernel (copy) -> {mem free,
      memcpy DtoH -> host -> child graph -> event record -> event wait
        -> WHILE (countdown from 5) { countdown kernel -> IF (default 1) { increment } }
        -> IF/ELSE (default 0) { [then] increment, [else] increment -> empty }
        -> SWITCH of 3 (default 2) { [0] increment, [1] empty, [2] child graph (increment) }
        -> batch mem op (write 42, barrier)} -> empty
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from graphcert.cuda.builder import GraphBuilder
from graphcert.cuda.context import RunContext
from graphcert.cuda.stream import Event

N = 1024  # u32 elements copied through the graph-owned allocation
LOOPS = 5  # WHILE iterations
FLAG = 42  # what the batch memory operation writes
COUNTERS = ("nested_if", "then", "else", "case0")


@dataclass
class AllKinds:
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


def build_all_kinds(ctx: RunContext, kernels: Path) -> AllKinds:
    """The graph of the module docstring; its buffers under AllKinds.buffers (one u32
    counter per name in COUNTERS, "flag" for the batch write, "iterations" for WHILE)."""
    copy = ctx.kernel(kernels, "t_copy_u32")
    inc = ctx.kernel(kernels, "t_increment")
    countdown = ctx.kernel(kernels, "t_countdown")
    zero = np.zeros(1, dtype=np.uint32)
    bufs: dict[str, Any] = {"out": ctx.alloc(4 * N), "host_out": ctx.pinned(4 * N),
                            "child": ctx.upload(zero), "flag": ctx.upload(zero),
                            "loop": ctx.upload(np.array([LOOPS], dtype=np.uint32)),
                            "iterations": ctx.upload(zero)}
    bufs.update({name: ctx.upload(zero) for name in COUNTERS})
    graph = AllKinds(GraphBuilder(), GraphBuilder(), Event(timing=False), bufs)
    graph.child.add_kernel(inc, 1, 1, bufs["child"])
    b = graph.builder
    alloc, scratch = b.add_mem_alloc(4 * N, ctx.device.index)
    fill = b.add_memset(scratch, 7, N, deps=[alloc])
    cp = b.add_kernel(copy, (N // 256, 1, 1), (256, 1, 1), np.uint64(scratch), bufs["out"],
                      np.uint32(N), deps=[fill])
    free = b.add_mem_free(scratch, deps=[cp])
    back = b.add_memcpy(bufs["host_out"], bufs["out"], 4 * N, deps=[cp])
    host = b.add_host(lambda: graph.host_calls.append(1), deps=[back])
    sub = b.add_child(graph.child.graph, deps=[host])
    rec = b.add_event_record(graph.event, deps=[sub])
    wait = b.add_event_wait(graph.event, deps=[rec])

    loop = b.conditional_handle(default=1)
    cond, body = b.add_while(loop, deps=[wait])
    tick = body.add_kernel(countdown, 1, 1, bufs["loop"], bufs["iterations"],
                           np.uint64(int(loop)))
    _nested, (nested_body,) = body.add_if(body.conditional_handle(default=1), deps=[tick])
    nested_body.add_kernel(inc, 1, 1, bufs["nested_if"])

    if_else, (then, otherwise) = b.add_if(b.conditional_handle(default=0), with_else=True,
                                          deps=[cond])
    then.add_kernel(inc, 1, 1, bufs["then"])
    last = otherwise.add_kernel(inc, 1, 1, bufs["else"])
    otherwise.add_empty(deps=[last])

    switch, (case0, case1, case2) = b.add_switch(b.conditional_handle(default=2), 3,
                                                 deps=[if_else])
    case0.add_kernel(inc, 1, 1, bufs["case0"])
    case1.add_empty()
    case2.add_child(graph.child.graph)

    flag = bufs["flag"].ptr
    ops = b.add_batch_mem_op([("write32", flag, FLAG), ("barrier", 0, 0)], deps=[switch])
    b.add_empty(deps=[ops, free])
    return graph


def expected_effects() -> dict[str, int]:
    """Each counter's value after one launch: the WHILE runs LOOPS times (the IF inside it
    each time), IF/ELSE takes its else body, SWITCH its body 2 (a child graph that adds to
    "child", as the top-level child graph does)."""
    return {"iterations": LOOPS, "nested_if": LOOPS, "then": 0, "else": 1, "case0": 0,
            "child": 2, "flag": FLAG}
