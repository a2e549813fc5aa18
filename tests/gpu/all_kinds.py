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

from pathlib import Path
from typing import Any

import numpy as np

from graphcert.cuda.builder import GraphBuilder
from graphcert.cuda.context import RunContext
from graphcert.cuda.stream import Event, Stream
from graphcert.model import GraphSnapshot, NodeRecord

from .every_kind import EveryKind, N, add_front

LOOPS = 5  # WHILE iterations
FLAG = 42  # what the batch memory operation writes
COUNTERS = ("nested_if", "then", "else", "case0")


AllKinds = EveryKind  # the same parts: the builder, its child graph, event and buffers


def walk(s: GraphSnapshot) -> list[NodeRecord]:
    """Every node of a snapshot, then those of its child graphs and bodies, depth first."""
    out = []
    for node in s.nodes:
        out.append(node)
        for child in node.children:
            out += walk(child)
    return out


def run_once(g: AllKinds, stream: Stream) -> dict[str, int]:
    """Launch the graph once; each counter of expected_effects() as it is after."""
    with g.builder.graph.instantiate() as exe:
        exe.launch(stream)
        stream.synchronize()
    return {name: int(g.buffers[name].download(np.uint32)[0]) for name in expected_effects()}


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
    wait, free = add_front(graph, ctx, copy)

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
