"""One workload on one GPU context: memory check, per-class setup, recording a graph.

Shared by capture, verify and bench. Runs on a GPU (imports graphcert.cuda).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from graphcert.cuda.builder import GraphBuilder
from graphcert.cuda.context import RunContext
from graphcert.cuda.graph import Graph, GraphExec, capture
from graphcert.cuda.stream import Stream
from graphcert.errors import CaptureError, GraphcertError, InputError
from graphcert.workloads import registry
from graphcert.workloads.loaded import NativeWorkload

if TYPE_CHECKING:
    from graphcert.run.runnable import Runnable

# Leave room for the driver, graph memory pools and the reference copies read back.
_MEMORY_HEADROOM = 256 << 20


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:.2f} GiB"


@dataclass
class Timings:
    """Seconds spent per phase, accumulated over a run (verify/bench print the breakdown)."""

    phases: dict[str, float] = field(default_factory=dict)

    def add(self, phase: str, seconds: float) -> None:
        self.phases[phase] = self.phases.get(phase, 0.0) + seconds


@dataclass(frozen=True)
class Built:
    """A recorded graph, instantiated and uploaded, with what each step took (seconds)."""

    graph: Graph
    exe: GraphExec
    capture_s: float
    instantiate_s: float
    upload_s: float

    def destroy(self) -> None:
        self.exe.destroy()
        self.graph.destroy()


class WorkloadSession:
    """A loaded workload on a context, set up for one capacity class at a time (`workload`:
    the one `ref` names, loaded already; None: load it here)."""

    def __init__(self, ctx: RunContext, ref: str, workload: NativeWorkload | None = None):
        self.ctx = ctx
        self.ref = ref
        native = workload if workload is not None else registry.load(ref).native()
        self.workload = native.workload
        self.hooks = native.hooks
        self.capacity: int | None = None
        self.timings = Timings()
        self._references: dict[int, dict[str, np.ndarray]] = {}

    @property
    def name(self) -> str:
        return str(self.workload.name)

    def memory_shortfall(self, capacity: int) -> str | None:
        """Why `capacity` cannot fit in device memory, or None if it fits (or is unknown)."""
        need = self.hooks.bytes_needed(capacity)
        if need is None:
            return None
        free = self.ctx.free_memory()
        if need + _MEMORY_HEADROOM > free:
            return (f"class {capacity:,} of {self.name} needs about {_gib(need)} of device "
                    f"memory; {_gib(free)} is free")
        return None

    def prepare(self, capacity: int) -> None:
        """Tear down the previous class and set up this one (refusing what cannot fit)."""
        self.release()
        shortfall = self.memory_shortfall(capacity)
        if shortfall:
            raise InputError(shortfall, hint="use a smaller --size or --classes range")
        t0 = time.perf_counter()
        compile_before = self.ctx.compile_s
        try:
            self.workload.setup(self.ctx, capacity)
        except GraphcertError:
            raise
        except Exception as exc:
            raise GraphcertError(f"workload {self.name}: setup({capacity}) raised "
                                 f"{type(exc).__name__}: {exc}") from exc
        compile_s = self.ctx.compile_s - compile_before
        self.timings.add("compile", compile_s)
        self.timings.add("setup", time.perf_counter() - t0 - compile_s)
        self.capacity = capacity

    def record_graph(self, stream: Stream, n: int, mode: str = "global") -> Graph:
        """Capture `record(stream, n)` (or build explicitly), naming workload and size on
        failure."""
        t0 = time.perf_counter()
        try:
            if self.hooks.build is not None:
                builder = GraphBuilder()
                try:
                    self.hooks.build(builder, n)
                except BaseException:
                    builder.graph.destroy()
                    raise
                graph = builder.graph
            else:
                graph = capture(stream, lambda: self.workload.record(stream, n), mode)
        except CaptureError as exc:
            raise CaptureError(f"workload {self.name} at n={n:,}: {exc.message}",
                               broken_by=exc.broken_by, hint=exc.hint) from exc
        except GraphcertError as exc:
            raise GraphcertError(f"workload {self.name} at n={n:,}: {exc.message}",
                                 hint=exc.hint, exit_code=exc.exit_code) from exc
        except Exception as exc:
            raise GraphcertError(f"workload {self.name}: building the graph for n={n:,} "
                                 f"raised {type(exc).__name__}: {exc}") from exc
        self.timings.add("capture", time.perf_counter() - t0)
        return graph

    def build(self, stream: Stream, n: int, mode: str = "global") -> Built:
        """Record, instantiate and upload the graph for n, timing each step (capture and
        bench report these as the graph's up-front cost)."""
        t0 = time.perf_counter()
        graph = self.record_graph(stream, n, mode)
        t1 = time.perf_counter()
        try:
            exe = graph.instantiate()
            t2 = time.perf_counter()
            try:
                exe.upload(stream)
                stream.synchronize()
            except BaseException:
                exe.destroy()
                raise
        except BaseException:
            graph.destroy()
            raise
        return Built(graph, exe, t1 - t0, t2 - t1, time.perf_counter() - t2)

    def run_eager(self, stream: Stream, n: int) -> None:
        """record() straight onto the stream, no graph."""
        try:
            self.workload.record(stream, n)
        except GraphcertError:
            raise
        except Exception as exc:
            raise GraphcertError(f"workload {self.name}: record(n={n:,}) raised "
                                 f"{type(exc).__name__}: {exc}") from exc

    def outputs(self, n: int) -> dict[str, np.ndarray]:
        """The workload's outputs for n, read back (compare them before the next record)."""
        return dict(self.workload.outputs(n))

    def reference(self, n: int) -> dict[str, np.ndarray]:
        """The numpy reference for n, computed once per class (verify compares it twice)."""
        if n not in self._references:
            self._references[n] = dict(self.workload.reference(n))
        return self._references[n]

    def release(self) -> None:
        self._references.clear()
        if self.capacity is not None:
            self.capacity = None
            try:
                self.workload.teardown()
            finally:
                self.ctx.release_buffers()


def context_for(subjects: Sequence[Runnable], device: int, seed: int = 0
                ) -> AbstractContextManager[RunContext | None]:
    """graphcert's own RunContext, only where a subject needs it (`needs_context`: a
    workload graphcert records; a framework step runs in its framework's context)."""
    if not any(one.needs_context for one in subjects):
        return nullcontext()
    return RunContext.open(device, seed=seed)
