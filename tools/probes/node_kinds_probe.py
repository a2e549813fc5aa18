"""Device probe (issue 33): which of CUDA's 14 graph node kinds graphcert's builder makes on
this driver, whether each reads back as itself and launches; whether kernel parameter values
read back (built and captured nodes); whether a freed pointer is found; why no external
semaphore can be made here. Prints facts, one line each; asserts nothing. On the GPU machine:
  PYTHONPATH=. python3 tools/probes/node_kinds_probe.py
"""

from __future__ import annotations

import ctypes.util
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cuda.bindings import driver  # noqa: E402

from graphcert.cuda.builder import GraphBuilder  # noqa: E402
from graphcert.cuda.context import RunContext  # noqa: E402
from graphcert.cuda.graph import capture  # noqa: E402
from graphcert.cuda.memory import DeviceBuffer  # noqa: E402
from graphcert.cuda.params import dangling_pointers  # noqa: E402
from graphcert.cuda.snapshot import node_params, read_snapshot  # noqa: E402
from graphcert.cuda.stream import Event, Stream  # noqa: E402
from graphcert.model import GraphSnapshot  # noqa: E402

KERNELS = ROOT / "tests" / "kernels" / "graphcert_test.cu"


def _kinds(s: GraphSnapshot) -> list[str]:
    out = []
    for n in s.nodes:
        out.append(n.kind.value)
        for c in n.children:
            out += _kinds(c)
    return out


def _try(label: str, build: Callable[[GraphBuilder], Any], ctx: RunContext,
         stream: Stream) -> None:
    b = GraphBuilder()
    step = "build"
    try:
        build(b)
        step = "read"
        snap = read_snapshot(b.graph)
        nodes = _kinds(snap)
        unread = [n.attrs.get("unread") for n in snap.nodes if n.attrs.get("unread")]
        step = "launch"
        with b.graph.instantiate() as exe:
            exe.launch(stream)
            stream.synchronize()
        top = snap.nodes[-1].attrs if snap.nodes else {}
        print(f"{label:22s} built read launched  kinds={nodes} unread={unread} "
              f"attrs={ {k: v for k, v in top.items() if k not in ('grid', 'block')} }")
    except Exception as exc:  # noqa: BLE001 - a probe reports every failure and goes on
        print(f"{label:22s} FAILED at {step}: {type(exc).__name__}: {str(exc)[:160]}")
    finally:
        b.graph.destroy()


def main() -> None:
    ctx = RunContext.open(0)
    _err, version = driver.cuDriverGetVersion()
    probe = GraphBuilder()
    print("driver version", version, "cuGraphNodeGetParams:",
          "works" if node_params(probe.add_empty()) is not None else "not on this driver")
    probe.graph.destroy()
    stream = Stream()
    inc = ctx.kernel(KERNELS, "t_increment")
    copy = ctx.kernel(KERNELS, "t_copy_u32")
    counter = ctx.upload(np.zeros(1, dtype=np.uint32))
    other = ctx.alloc(4096)
    event = Event(timing=False)
    child = GraphBuilder()
    child.add_kernel(inc, 1, 1, counter)

    def alloc_free(b: GraphBuilder) -> None:
        node, ptr = b.add_mem_alloc(4096, ctx.device.index)
        b.add_mem_free(ptr, deps=[node])

    def conditional(kind: str) -> Callable[[GraphBuilder], Any]:
        def build(b: GraphBuilder) -> None:
            h = b.conditional_handle(default=1 if kind != "switch" else 2)
            if kind == "if":
                _n, bodies = b.add_if(h)
            elif kind == "if_else":
                _n, bodies = b.add_if(h, with_else=True)
            else:
                _n, bodies = b.add_switch(h, 3)
            for body in bodies:
                body.add_kernel(inc, 1, 1, counter)
        return build

    cases: list[tuple[str, Callable[[GraphBuilder], Any]]] = [
        ("kernel", lambda b: b.add_kernel(inc, 1, 1, counter)),
        ("memcpy", lambda b: b.add_memcpy(other, counter, 4)),
        ("memset", lambda b: b.add_memset(other, 0, 16)),
        ("host", lambda b: b.add_host(lambda: None)),
        ("graph", lambda b: b.add_child(child.graph)),
        ("empty", lambda b: b.add_empty()),
        ("event_record+wait", lambda b: b.add_event_wait(event, deps=[b.add_event_record(
            event)])),
        ("mem_alloc+free", alloc_free),
        ("batch_mem_op", lambda b: b.add_batch_mem_op(
            [("write32", other.ptr, 42), ("write64", other.ptr + 8, 1 << 40),
             ("barrier", 0, 0), ("wait32", other.ptr, 42)])),
        ("conditional if", conditional("if")),
        ("conditional if_else", conditional("if_else")),
        ("conditional switch", conditional("switch")),
    ]
    for label, build in cases:
        _try(label, build, ctx, stream)
    print("batch write read back:", int(other.download(np.uint32, 1)[0]), "(42 expected)")

    # The DOT print of IF/ELSE and SWITCH (how the reader takes their bodies on 13.0).
    for kind in ("if_else", "switch"):
        b = GraphBuilder()
        try:
            conditional(kind)(b)
            dot = b.graph.dot()
            lines = [ln.strip()[:200] for ln in dot.splitlines() if "onditional" in ln
                     or "subgraph" in ln]
            print(f"dot {kind}:", " || ".join(lines[:8]))
        except Exception as exc:  # noqa: BLE001
            print(f"dot {kind} FAILED: {exc}")
        finally:
            b.graph.destroy()

    # External semaphores: CUDA imports them (cuImportExternalSemaphore) but makes none.
    libs = {name: ctypes.util.find_library(name) for name in ("vulkan", "nvscisync", "EGL")}
    print("external semaphore sources on this machine:", libs,
          "(every import type needs an FD/handle exported by Vulkan, D3D or NvSciSync)")

    # Parameter values: an explicitly built node and a captured one.
    b = GraphBuilder()
    b.add_kernel(copy, 1, 256, counter, other, np.uint32(1000))
    s = read_snapshot(b.graph)
    b.graph.destroy()
    a = s.nodes[0].attrs
    print("built kernel values", a.get("param_values"), "pointers", a.get("param_pointers"),
          "expected", [counter.ptr, other.ptr, 1000])
    g = capture(stream, lambda: copy.launch(stream, 1, 256, counter, other, np.uint32(1024)))
    s = read_snapshot(g)
    g.destroy()
    a = s.nodes[0].attrs
    print("captured kernel values", a.get("param_values"), "pointers", a.get("param_pointers"),
          "unread", a.get("unread"))

    # A freed pointer is found before a replay.
    doomed = DeviceBuffer(4096)
    b = GraphBuilder()
    b.add_kernel(copy, 1, 256, doomed, other, np.uint32(16))
    s = read_snapshot(b.graph)
    doomed.destroy()
    print("dangling after free:", [d.line() for d in dangling_pointers(s)])
    b.graph.destroy()
    stream.destroy()
    event.destroy()
    child.graph.destroy()
    ctx.close()


if __name__ == "__main__":
    try:
        main()
    except Exception:  # noqa: BLE001
        traceback.print_exc(limit=4)
        sys.exit(1)
