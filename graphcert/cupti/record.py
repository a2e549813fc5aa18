"""The collector behind `graphcert record` and `graphcert.record()`: one CUPTI subscriber
(graphcert.cupti.callbacks) and kernel activity (graphcert.cupti.activity) turned into a
pure `graphcert.recording.Recording`.

Each executable's source graph is read when its cuGraphInstantiate* call returns (the API
exit callback), not in the GRAPHEXEC_CREATED resource callback: at the API exit the driver
has finished with the graph and holds no lock on it, and the graph is still alive (PyTorch
frees its captured graph right after instantiating it unless keep_graph=True). The read
calls only host-side graph queries (cuGraphGetNodes, cuGraphNodeGetType, cuGraph*NodeGetParams,
cuGraphGetEdges): no stream work, no synchronisation, nothing that waits on the GPU.

Graph launches are counted and timed from GRAPH_TRACE activity records (one a launch, naming
the executable by its CUPTI id), not from a callback on cuGraphLaunch, and a graph's nodes
give no kernel, copy or set records: on an H100 a serving step (one copy, one 8-kernel replay)
took 24.5 µs plain, 113 µs under the callback and kernel records, 25.7 µs with GRAPH_TRACE
(tools/probes/record_cost_probe.py). Copies and sets are not recorded at all (nothing reads
them).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType, TracebackType

from graphcert.cupti.activity import (
    MARKER_END,
    MARKER_INSTANT,
    MARKER_START,
    Activity,
    MarkerRecord,
)
from graphcert.cupti.callbacks import Subscriber
from graphcert.cupti.library import libcupti_path, load
from graphcert.errors import GraphcertError
from graphcert.model import GraphSnapshot, NodeKind
from graphcert.recording import (
    Destroyed,
    Instantiated,
    KernelRun,
    LaunchCall,
    Launched,
    Made,
    Marker,
    MarkerEdge,
    Recording,
    Updated,
)

NVTX_ENV = "NVTX_INJECTION64_PATH"  # where NVTX (v3, header-only in PyTorch, CuPy, nvtx)
# looks, at a process's first NVTX call, for the tool that receives its ranges


def route_nvtx() -> tuple[str | None, Callable[[], None]]:
    """Point NVTX at the libcupti this process loaded (so MARKER activity hears the
    program's ranges); (why NVTX ranges cannot be heard, or None; what undoes it). Only a
    process whose NVTX has not started yet is routed: a program calls NVTX after this."""
    path, current = libcupti_path(), os.environ.get(NVTX_ENV)
    if path is None:
        return "libcupti's path could not be read (/proc/self/maps)", lambda: None
    if current and current != path:
        return f"NVTX goes to another tool ({NVTX_ENV}={current})", lambda: None
    if current == path:
        return None, lambda: None
    os.environ[NVTX_ENV] = path

    def unroute() -> None:
        os.environ.pop(NVTX_ENV, None)

    return None, unroute


def marker_event(m: MarkerRecord) -> Marker | None:
    """A marker record as an event; None for the kinds that mark no range (sync markers)."""
    if m.flags & MARKER_START:
        edge = MarkerEdge.START
    elif m.flags & MARKER_END:
        edge = MarkerEdge.END
    elif m.flags & MARKER_INSTANT:
        edge = MarkerEdge.INSTANT
    else:
        return None
    return Marker(m.marker_id, edge, m.name, m.thread_id, m.timestamp_ns)

Reader = Callable[[int], GraphSnapshot]  # a CUgraph's address -> its snapshot


@dataclass(frozen=True)
class _Ids:
    exec_id: int | None  # cupti.get_graph_exec_id of the executable
    all: tuple[int, ...]  # every id CUPTI gave (the executable's, the source graph's)


class Recorder:
    """Records from entry to exit; `recording()` then gives what was seen. `read` reads a
    source graph (run/ passes graphcert's snapshot reader); None records no snapshots."""

    def __init__(self, read: Reader | None, clock: Callable[[], int] = time.perf_counter_ns
                 ) -> None:
        self._read = read
        self._clock = clock
        self._lock = threading.Lock()
        self._t0 = clock()
        self._keys: dict[int, int] = {}  # live executable handle -> its key
        self._captured: dict[int, int] = {}  # graph handle -> capture ns
        self._inst: list[Instantiated] = []
        self._launched: list[Launched] = []
        self._updated: list[Updated] = []
        self._destroyed: list[Destroyed] = []
        self._activity = Activity(markers=True, launch_calls=True, graph_trace=True,
                                  copies=False)
        self._exec_ids: dict[int, int] = {}  # an executable's CUPTI id -> its key
        self._cupti_t0: int | None = None  # CUPTI's clock when the recording began
        self._nvtx_unavailable: str | None = "the recording has not started"
        self._unroute: Callable[[], None] = lambda: None
        self._markers: tuple[Marker, ...] = ()
        self._calls: tuple[LaunchCall, ...] = ()
        self._subscriber = Subscriber(self, clock)
        self._cupti: ModuleType | None = None
        self._kernels: tuple[KernelRun, ...] = ()
        self._dropped = 0
        self._open = False

    def __enter__(self) -> Recorder:
        self._cupti = load()
        self._subscriber.__enter__()
        try:
            self._activity.__enter__()
        except BaseException:
            self._subscriber.__exit__(None, None, None)
            raise
        self._nvtx_unavailable, self._unroute = route_nvtx()  # libcupti is loaded by now
        self._t0 = self._clock()
        try:
            self._cupti_t0 = int(self._cupti.get_timestamp())
        except Exception:  # noqa: BLE001 (launch times then count from the first launch)
            self._cupti_t0 = None
        self._open = True
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Flush the activity records and unsubscribe (once; later calls do nothing)."""
        if not self._open:
            return
        self._open = False
        try:
            self._activity.__exit__(None, None, None)
        finally:
            self._subscriber.__exit__(None, None, None)
            self._unroute()
        self._kernels = tuple(KernelRun(r.name, r.start_ns, r.end_ns, r.graph_id,
                                        r.correlation_id)
                              for r in self._activity.records if r.kind is NodeKind.KERNEL)
        self._markers = tuple(e for m in self._activity.markers
                              if (e := marker_event(m)) is not None)
        self._calls = tuple(LaunchCall(c.correlation_id, c.thread_id, c.start_ns)
                            for c in self._activity.launch_calls)
        self._dropped = self._activity.dropped
        launches = self._activity.graph_launches
        t0 = self._cupti_t0 if self._cupti_t0 is not None else min(
            (g.start_ns for g in launches), default=0)
        with self._lock:  # launches of executables made before the recording are not kept
            self._launched = [Launched(key, max(0, g.start_ns - t0), g.correlation_id,
                                       g.start_ns, g.end_ns)
                              for g in launches
                              if (key := self._exec_ids.get(g.graph_id)) is not None]

    @property
    def errors(self) -> tuple[str, ...]:
        """Callback failures (the recording went on without what they would have given)."""
        return tuple(self._subscriber.errors)

    def recording(self) -> Recording:
        with self._lock:
            return Recording(tuple(self._inst), tuple(self._launched), tuple(self._updated),
                             tuple(self._destroyed), self._kernels, self._dropped,
                             self._markers, self._calls, self._nvtx_unavailable)

    # ------------------------------------------------- the Sink (called in CUPTI's callbacks)

    def _since(self, ns: int) -> int:
        return max(0, ns - self._t0)

    def instantiated(self, graph: int, graph_exec: int, start_ns: int, end_ns: int) -> None:
        snapshot, why = None, None
        if self._read is None:
            why = "not read (snapshots off)"
        else:
            try:
                snapshot = self._read(graph)
            except GraphcertError as exc:
                why = str(exc).splitlines()[0][:300]
            except Exception as exc:  # noqa: BLE001 (a graph we cannot read is a value)
                why = f"{type(exc).__name__}: {exc}"[:300]
        ids = self._ids(graph, graph_exec)
        with self._lock:
            key = len(self._inst)
            self._keys[graph_exec] = key
            if ids.exec_id is not None:
                self._exec_ids[ids.exec_id] = key
            capture = self._captured.get(graph)
            self._inst.append(Instantiated(
                key, ids.all, Made.CAPTURE if capture is not None else Made.EXPLICIT,
                self._since(start_ns), max(0, end_ns - start_ns), capture, snapshot, why))

    def _ids(self, graph: int, graph_exec: int) -> _Ids:
        """CUPTI's ids of the executable and its source graph (a kernel or graph-launch
        record's graph_id is the executable's: seen on an H100, tools/probes)."""
        got: list[int | None] = []
        for fn, handle in (("get_graph_exec_id", graph_exec), ("get_graph_id", graph)):
            try:
                got.append(int(getattr(self._cupti, fn)(handle)))
            except Exception:  # noqa: BLE001 (an id CUPTI cannot give is left out)
                got.append(None)
        return _Ids(got[0], tuple(i for i in got if i is not None))

    def captured(self, graph: int, start_ns: int, end_ns: int) -> None:
        with self._lock:
            self._captured[graph] = max(0, end_ns - start_ns)

    def updated(self, graph_exec: int, ok: bool, result: str, at_ns: int) -> None:
        with self._lock:
            key = self._keys.get(graph_exec)
            if key is not None:
                self._updated.append(Updated(key, self._since(at_ns), ok, result))

    def destroyed(self, graph_exec: int, at_ns: int) -> None:
        with self._lock:
            key = self._keys.pop(graph_exec, None)
            if key is not None:
                self._destroyed.append(Destroyed(key, self._since(at_ns)))


def cupti_version() -> int:
    """The CUPTI (cupti-python) version the recording ran with."""
    from graphcert.cupti.library import version

    return version()


__all__ = ["NVTX_ENV", "Reader", "Recorder", "cupti_version", "marker_event", "route_nvtx"]
