"""CUPTI activity tracing as a context manager: device records (kernels, copies, sets and,
where asked, NVTX markers) as pure values, and how many records CUPTI dropped.

    with Activity() as act:
        ... replay the graph ...
    act.records   # DeviceRecord values, graph and eager ones alike
    act.dropped   # cuptiActivityGetNumDroppedRecords on the global queue (context NULL)

With GRAPH_TRACE (graph_trace=True) CUPTI gives one record per graph launch and no kernel,
copy or set records of the graph's nodes (eager ones still come; measured on an H100,
DEVICE_FACTS.md): profile leaves it off, record turns it on (a serving step's eight graph
kernel records cost it 52 µs of Python a step on an H100, its one launch record 1 µs).
Records are converted inside the buffer-completed callback, since the record objects view a
buffer CUPTI reuses.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from dataclasses import dataclass
from types import ModuleType, TracebackType

from graphcert.cupti.library import CuptiUnavailable, load, refusal
from graphcert.errors import GraphcertError, InputError
from graphcert.model import NodeKind
from graphcert.profiling import ActivityRecord

BUFFER_BYTES = 8 * 1024 * 1024
KINDS = ("CONCURRENT_KERNEL", "MEMCPY", "MEMSET")


@dataclass(frozen=True)
class DeviceRecord:
    """One kernel, memcpy or memset CUPTI timed, in a graph (graph_id != 0) or eager.

    graph_node_id: CUPTI's 64-bit node id (0 for eager work); name: the kernel's (mangled)
    name, or "memcpy HTOD" / "memset" for copies and sets."""

    kind: NodeKind
    name: str
    start_ns: int
    end_ns: int
    graph_id: int
    graph_node_id: int
    correlation_id: int
    stream_id: int
    device_id: int
    context_id: int

    @property
    def in_graph(self) -> bool:
        return self.graph_id != 0

    def activity(self) -> ActivityRecord:
        """The record as graphcert.profiling joins it to a graph's nodes."""
        return ActivityRecord(self.graph_node_id, self.start_ns, self.end_ns, self.kind,
                              self.name, self.correlation_id, self.stream_id)


# cupti.h's CUPTI_ACTIVITY_FLAG_MARKER_* bits (cupti-python's ActivityFlag folds END and
# INSTANTANEOUS into aliases of other flags of the same value, so the bits are named here)
MARKER_INSTANT, MARKER_START, MARKER_END = 1 << 0, 1 << 1, 1 << 2
LAUNCH_CALLS = ("LaunchKernel", "LaunchCooperativeKernel")  # API names whose calls we keep


@dataclass(frozen=True)
class GraphLaunchRecord:
    """One graph launch CUPTI timed on the device (GRAPH_TRACE activity): `graph_id` is the
    launched executable's CUPTI id (cupti.get_graph_exec_id), `correlation_id` its
    cuGraphLaunch call's; start and end span the launch's first node's start to its last
    node's end."""

    graph_id: int
    correlation_id: int
    start_ns: int
    end_ns: int


@dataclass(frozen=True)
class MarkerRecord:
    """One NVTX marker record (MARKER activity): a range's start or end, or an instant.
    `flags` holds the MARKER_* bits; `thread_id` is CUPTI's id of the thread that marked."""

    name: str
    marker_id: int
    timestamp_ns: int
    flags: int
    domain: str
    thread_id: int


@dataclass(frozen=True)
class LaunchCallRecord:
    """One kernel-launch API call (RUNTIME or DRIVER activity, enabled for the launch calls
    only): its thread and host start, joined to its kernel by `correlation_id`."""

    correlation_id: int
    thread_id: int
    start_ns: int


def _marker_thread(rec: object) -> int:
    """The marking thread of a marker record (its object id's process/thread half); 0 where
    the record names no thread."""
    try:
        return int(rec.object_id.pt.thread_id)  # type: ignore[attr-defined]
    except (AttributeError, TypeError, ValueError):
        return 0


@dataclass(frozen=True)
class _Kinds:
    """The ActivityKind values convert() tells apart, as ints (read once per cupti module:
    enum lookups per record cost a serving loop microseconds a step)."""

    kernels: tuple[int, int]
    memcpy: int
    memset: int
    marker: int
    api: tuple[int, int]
    graph_trace: int


@functools.lru_cache(maxsize=4)
def _kinds(cupti: ModuleType) -> _Kinds:
    ak = cupti.ActivityKind
    return _Kinds((int(ak.CONCURRENT_KERNEL), int(ak.KERNEL)), int(ak.MEMCPY), int(ak.MEMSET),
                  int(ak.MARKER), (int(ak.RUNTIME), int(ak.DRIVER)), int(ak.GRAPH_TRACE))


Converted = DeviceRecord | MarkerRecord | LaunchCallRecord | GraphLaunchRecord


def convert(cupti: ModuleType, rec: object) -> Converted | None:
    """The pure value of one CUPTI activity record, or None for a kind we do not keep."""
    kind = int(getattr(rec, "kind", -1))
    ak = _kinds(cupti)
    if kind in ak.kernels:
        node_kind, name = NodeKind.KERNEL, str(getattr(rec, "name", "") or "")
    elif kind == ak.graph_trace:
        return GraphLaunchRecord(int(getattr(rec, "graph_id", 0)),
                                 int(getattr(rec, "correlation_id", 0)),
                                 int(getattr(rec, "start", 0)), int(getattr(rec, "end", 0)))
    elif kind == ak.memcpy:
        copy = int(getattr(rec, "copy_kind", 0))
        try:
            label = cupti.ActivityMemcpyKind(copy).name
        except ValueError:
            label = str(copy)
        node_kind, name = NodeKind.MEMCPY, f"memcpy {label}"
    elif kind == ak.memset:
        node_kind, name = NodeKind.MEMSET, "memset"
    elif kind == ak.marker:
        return MarkerRecord(str(getattr(rec, "name", "") or ""), int(getattr(rec, "id", 0)),
                            int(getattr(rec, "timestamp", 0)), int(getattr(rec, "flags_", 0)),
                            str(getattr(rec, "domain", "") or ""), _marker_thread(rec))
    elif kind in ak.api:
        return LaunchCallRecord(int(getattr(rec, "correlation_id", 0)),
                                int(getattr(rec, "thread_id", 0)), int(getattr(rec, "start", 0)))
    else:
        return None
    return DeviceRecord(node_kind, name, int(rec.start), int(rec.end),  # type: ignore[attr-defined]
                        int(getattr(rec, "graph_id", 0)), int(getattr(rec, "graph_node_id", 0)),
                        int(getattr(rec, "correlation_id", 0)), int(getattr(rec, "stream_id", 0)),
                        int(getattr(rec, "device_id", 0)), int(getattr(rec, "context_id", 0)))


def launch_cbids(cupti: ModuleType) -> list[tuple[bool, int]]:
    """(runtime?, cbid) of every kernel-launch API this CUPTI names (cudaLaunchKernel*,
    cuLaunchKernel*, the cooperative ones), runtime and driver."""
    out = []
    for runtime, enum_name in ((True, "RuntimeApiTraceCbid"), (False, "DriverApiTraceCbid")):
        enum = getattr(cupti, enum_name, None)
        for name in dir(enum) if enum is not None else ():
            if any(k in name for k in LAUNCH_CALLS) and not name.startswith("__"):
                out.append((runtime, int(getattr(enum, name))))
    return sorted(set(out))


class Activity:
    """Enables CONCURRENT_KERNEL activity unless kernels=False, MEMCPY and MEMSET unless
    copies=False (both off with GRAPH_TRACE: its records alone, as span mode wants), GRAPH_TRACE
    with graph_trace=True (one record a graph launch instead of its nodes' records), MARKER
    with markers=True, and API records of the kernel-launch calls alone with
    launch_calls=True (through cuptiActivityEnableRuntimeApi/DriverApi: the RUNTIME and DRIVER
    kinds whole gave 2,080 records for 8 launches in a PyTorch probe on an H200) on entry; on
    exit flushes every buffer (forced), disables them and reads the dropped count. A failure
    to enable is a CuptiUnavailable with nothing left enabled."""

    def __init__(self, *, markers: bool = False, launch_calls: bool = False,
                 graph_trace: bool = False, copies: bool = True, kernels: bool = True,
                 buffer_bytes: int = BUFFER_BYTES) -> None:
        if buffer_bytes < 64 * 1024:
            raise InputError(f"activity buffer of {buffer_bytes} bytes is too small",
                             hint="use at least 64 KiB")
        self._kinds = ((KINDS[:1] if kernels else ()) + (KINDS[1:] if copies else ())
                       + (("MARKER",) if markers else ())
                       + (("GRAPH_TRACE",) if graph_trace else ()))
        self._buffer_bytes = buffer_bytes
        self._lock = threading.Lock()
        self._records: list[DeviceRecord] = []
        self._markers: list[MarkerRecord] = []
        self._calls: list[LaunchCallRecord] = []
        self._graph_launches: list[GraphLaunchRecord] = []
        self._launch_calls = launch_calls
        self._enabled: list[object] = []
        self._enabled_apis: list[tuple[bool, int]] = []
        self._cupti: ModuleType | None = None
        self.dropped = 0
        self.ignored = 0  # records of other kinds CUPTI delivered (e.g. another client's)

    def __enter__(self) -> Activity:
        global _SINK
        cupti = self._cupti = load()
        if _SINK is not None:
            raise GraphcertError("CUPTI activity is already being collected in this process",
                                 hint="finish the other `with Activity()` block first")
        _register(cupti)
        _SINK = self
        for name in self._kinds:
            kind = getattr(cupti.ActivityKind, name)
            try:
                cupti.activity_enable(kind)
            except Exception as exc:
                self._disable()
                raise refusal(f"enabling {name} activity", exc) from None
            self._enabled.append(kind)
        if self._launch_calls:
            for runtime, cbid in launch_cbids(cupti):
                enable = (cupti.activity_enable_runtime_api if runtime
                          else cupti.activity_enable_driver_api)
                try:
                    enable(cbid, 1)
                except Exception as exc:
                    self._disable()
                    raise refusal("enabling launch-call activity", exc) from None
                self._enabled_apis.append((runtime, cbid))
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self.flush()
            self.dropped += self._read_dropped()
        except GraphcertError:
            if et is None:
                raise  # an error of the body wins over one of the flush
        finally:
            self._disable()

    def flush(self) -> None:
        """Deliver every buffered record now (a forced flush: incomplete buffers too)."""
        if self._cupti is None:
            return
        try:
            self._cupti.activity_flush_all(1)  # CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
        except Exception as exc:
            raise refusal("flushing activity buffers", exc) from None

    def take(self) -> tuple[DeviceRecord, ...]:
        """Flush, and hand over (and forget) the device records collected so far."""
        self.flush()
        with self._lock:
            out, self._records = tuple(self._records), []
        return out

    @property
    def records(self) -> tuple[DeviceRecord, ...]:
        with self._lock:
            return tuple(self._records)

    @property
    def markers(self) -> tuple[MarkerRecord, ...]:
        with self._lock:
            return tuple(self._markers)

    @property
    def launch_calls(self) -> tuple[LaunchCallRecord, ...]:
        with self._lock:
            return tuple(self._calls)

    @property
    def graph_launches(self) -> tuple[GraphLaunchRecord, ...]:
        with self._lock:
            return tuple(self._graph_launches)

    def _completed(self, activities: list[object]) -> None:
        assert self._cupti is not None
        devices: list[DeviceRecord] = []
        markers: list[MarkerRecord] = []
        calls: list[LaunchCallRecord] = []
        launches: list[GraphLaunchRecord] = []
        ignored = 0
        for rec in activities:
            value = convert(self._cupti, rec)
            if isinstance(value, DeviceRecord):
                devices.append(value)
            elif isinstance(value, GraphLaunchRecord):
                launches.append(value)
            elif isinstance(value, MarkerRecord):
                markers.append(value)
            elif isinstance(value, LaunchCallRecord):
                calls.append(value)
            else:
                ignored += 1
        with self._lock:
            self._records.extend(devices)
            self._markers.extend(markers)
            self._calls.extend(calls)
            self._graph_launches.extend(launches)
            self.ignored += ignored

    def _read_dropped(self) -> int:
        """Records dropped for want of buffer space since the last call, from CUPTI's global
        queue (context NULL, stream 0); 0 where this CUPTI cannot say."""
        assert self._cupti is not None
        count = ctypes.c_size_t(0)
        try:
            self._cupti.activity_get_num_dropped_records(0, 0, ctypes.addressof(count))
        except Exception as exc:
            raise refusal("reading the dropped-record count", exc) from None
        return int(count.value)

    def _disable(self) -> None:
        global _SINK
        cupti, kinds, self._enabled = self._cupti, self._enabled, []
        apis, self._enabled_apis = self._enabled_apis, []
        if _SINK is self:
            _SINK = None
        if cupti is None:
            return
        for runtime, cbid in apis:
            try:
                (cupti.activity_enable_runtime_api if runtime
                 else cupti.activity_enable_driver_api)(cbid, 0)
            except Exception:  # noqa: BLE001 (disabling is best effort on the way out)
                pass
        for kind in reversed(kinds):
            try:
                cupti.activity_disable(kind)
            except Exception:  # noqa: BLE001 (disabling is best effort on the way out)
                pass


# CUPTI's buffer callbacks are registered once per process (and per loaded cupti module) and
# hand records to the Activity being collected; records delivered outside one are dropped.
_SINK: Activity | None = None
_REGISTERED_WITH: list[ModuleType] = []  # the cupti module the callbacks are registered with


def _register(cupti: ModuleType) -> None:
    if _REGISTERED_WITH and _REGISTERED_WITH[0] is cupti:
        return
    try:
        cupti.activity_register_callbacks(_requested, _completed)
    except Exception as exc:  # cuptiError, or a library that cannot start at all
        raise refusal("registering the activity buffer callbacks", exc) from None
    _REGISTERED_WITH[:] = [cupti]


def _requested() -> tuple[int, int]:
    sink = _SINK
    return (sink._buffer_bytes if sink is not None else BUFFER_BYTES), 0  # 0: as many as fit


def _completed(activities: list[object]) -> None:
    sink = _SINK
    if sink is not None:
        sink._completed(activities)


def ensure_available() -> None:
    """CuptiUnavailable now, before any capture, where CUPTI cannot be loaded."""
    load()


__all__ = ["KINDS", "MARKER_END", "MARKER_INSTANT", "MARKER_START", "Activity",
           "CuptiUnavailable", "DeviceRecord", "GraphLaunchRecord", "LaunchCallRecord",
           "MarkerRecord", "convert", "ensure_available", "launch_cbids"]
