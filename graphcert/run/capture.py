"""Capture a workload per capacity class: snapshot, DOT, and what the capture cost.

Runs on a GPU. Reports like vLLM's "capturing took N s and M GiB": capture time,
instantiate time, and graph memory from the driver's attributes and free memory.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

from graphcert.buckets import class_of
from graphcert.cert.document import safe_name
from graphcert.cert.results.capture import CaptureResult
from graphcert.cuda.snapshot import read_snapshot
from graphcert.cuda.stream import Stream
from graphcert.fileio import atomic_write_bytes, atomic_write_text
from graphcert.model import GraphSnapshot, save_snapshot
from graphcert.run.session import WorkloadSession


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
            built = session.build(stream, n, mode)
            try:
                free_after = ctx.free_memory()
                meta = {"workload": session.ref, "name": session.name, "capacity": capacity,
                        "n": n, "mode": mode, "gpu": ctx.device.info.name}
                snapshot = read_snapshot(built.graph, meta)
                result = CaptureResult(capacity, n, snapshot, built.graph.dot(),
                                       built.capture_s, built.instantiate_s, built.upload_s,
                                       free_before - free_after, ctx.device.graph_memory())
            finally:
                built.destroy()
            yield result
        session.release()


def capture_snapshot(ref: str, size: int, mode: str = "global", device: int = 0) -> GraphSnapshot:
    """The snapshot of one workload at one size (for `inventory WORKLOAD`): a workload at its
    class, a framework step by its framework at that size."""
    from graphcert.run.runnable import runnable
    from graphcert.workloads.registry import load

    one = runnable(load(ref))
    (result,) = one.capture([size], one.unbucketed, mode=mode, device=device,
                            check_memory=False)
    return result.snapshot


def write_outputs(result: CaptureResult, out_dir: Path, name: str) -> list[Path]:
    """snapshot JSON, DOT, and SVG when Graphviz's `dot` is on the PATH. Each write atomic."""
    stem = f"{safe_name(name)}-c{result.capacity}"
    written = [save_snapshot(out_dir / f"{stem}.snapshot.json", result.snapshot),
               atomic_write_text(out_dir / f"{stem}.dot", result.dot)]
    dot_exe = shutil.which("dot")
    if dot_exe:
        proc = subprocess.run([dot_exe, "-Tsvg"], input=result.dot.encode(),
                              capture_output=True, timeout=120)
        if proc.returncode == 0:
            written.append(atomic_write_bytes(out_dir / f"{stem}.svg", proc.stdout))
    return written
