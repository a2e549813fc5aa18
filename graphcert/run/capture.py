"""Capture a workload per capacity class: snapshot, DOT, and what the capture cost.

Runs on a GPU. Reports like vLLM's "capturing took N s and M GiB": capture time,
instantiate time, and graph memory from the driver's attributes and free memory.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphcert.classes import class_of
from graphcert.cuda.context import RunContext
from graphcert.cuda.snapshot import read_snapshot
from graphcert.cuda.stream import Stream
from graphcert.fileio import atomic_write_bytes, atomic_write_text
from graphcert.model import GraphSnapshot, save_snapshot
from graphcert.run.session import WorkloadSession


@dataclass(frozen=True)
class CaptureResult:
    """One class captured: its snapshot, the driver's DOT, and the costs."""

    capacity: int
    n: int
    snapshot: GraphSnapshot
    dot: str
    capture_s: float
    instantiate_s: float
    upload_s: float
    free_delta_bytes: int
    graph_memory: dict[str, int]

    def cost(self) -> dict[str, Any]:
        return {"capacity": self.capacity, "n": self.n, "capture_s": self.capture_s,
                "instantiate_s": self.instantiate_s, "upload_s": self.upload_s,
                "device_memory_bytes": self.free_delta_bytes,
                "graph_memory": self.graph_memory, "nodes": self.snapshot.node_count,
                "topology_hash": self.snapshot.topology_hash,
                "shape_hash": self.snapshot.shape_hash}


def capture_sizes(session: WorkloadSession, sizes: list[int], mode: str,
                  capacity_of: Callable[[int], int] = class_of) -> Iterator[CaptureResult]:
    """For each n: set up its class (or bucket), capture, instantiate and upload, read the
    snapshot."""
    ctx = session.ctx
    with Stream() as stream:
        for n in sizes:
            capacity = capacity_of(n)
            session.prepare(capacity)
            ctx.device.synchronize()
            free_before = ctx.free_memory()
            t0 = time.perf_counter()
            graph = session.record_graph(stream, n, mode)
            t1 = time.perf_counter()
            try:
                exe = graph.instantiate()
                t2 = time.perf_counter()
                exe.upload(stream)
                stream.synchronize()
                t3 = time.perf_counter()
                free_after = ctx.free_memory()
                meta = {"workload": session.ref, "name": session.name, "capacity": capacity,
                        "n": n, "mode": mode, "gpu": ctx.device.info.name}
                snapshot = read_snapshot(graph, meta)
                result = CaptureResult(capacity, n, snapshot, graph.dot(), t1 - t0, t2 - t1,
                                       t3 - t2, free_before - free_after,
                                       ctx.device.graph_memory())
                exe.destroy()
            finally:
                graph.destroy()
            yield result
        session.release()


def capture_snapshot(ref: str, size: int, mode: str = "global", device: int = 0) -> GraphSnapshot:
    """The snapshot of one workload at one size (for `inventory WORKLOAD`)."""
    with RunContext.open(device) as ctx:
        session = WorkloadSession(ctx, ref)
        (result,) = list(capture_sizes(session, [size], mode))
        return result.snapshot


def write_outputs(result: CaptureResult, out_dir: Path, name: str) -> list[Path]:
    """snapshot JSON, DOT, and SVG when Graphviz's `dot` is on the PATH. Each write atomic."""
    stem = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}-c{result.capacity}"
    written = [save_snapshot(out_dir / f"{stem}.snapshot.json", result.snapshot),
               atomic_write_text(out_dir / f"{stem}.dot", result.dot)]
    dot_exe = shutil.which("dot")
    if dot_exe:
        proc = subprocess.run([dot_exe, "-Tsvg"], input=result.dot.encode(),
                              capture_output=True, timeout=120)
        if proc.returncode == 0:
            written.append(atomic_write_bytes(out_dir / f"{stem}.svg", proc.stdout))
    return written
