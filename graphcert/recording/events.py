"""The events a recording is made of, as pure values (the CUPTI layer makes them).

Host-side events (instantiations, launches, updates, destructions) carry `at_ns`: host
nanoseconds since the recording began. Kernel runs carry CUPTI's device timestamps; the two
clocks are never compared (steady state is found on the device clock alone: see analysis).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from graphcert.model import GraphSnapshot


class Made(str, Enum):
    """How the instantiated graph was made."""

    CAPTURE = "capture"  # stream capture (cuStreamBeginCapture .. cuStreamEndCapture)
    EXPLICIT = "explicit"  # built node by node (cuGraphCreate, cuGraphAdd*Node, cloned)


@dataclass(frozen=True)
class Instantiated:
    """One graph executable made (cuGraphInstantiate*). `exec_key` names it within the
    recording, once (the collector gives a new key when the driver reuses a handle);
    `graph_ids` are the ids a kernel record's graph_id may carry for it (CUPTI's id of the
    executable and of its source graph). `snapshot` is the source graph read at
    instantiation; None with `read_error` saying why when it could not be read."""

    exec_key: int
    graph_ids: tuple[int, ...]
    made: Made
    at_ns: int
    instantiate_ns: int
    capture_ns: int | None = None  # begin to end of the capture that made it
    snapshot: GraphSnapshot | None = None
    read_error: str | None = None


@dataclass(frozen=True)
class Launched:
    """One cuGraphLaunch of an executable; `correlation_id` joins it to its kernels. A launch
    timed as a whole (a GRAPH_TRACE record: no kernel records of its nodes) carries its
    device start and end (CUPTI's clock), and `at_ns` is its device start since the
    recording began."""

    exec_key: int
    at_ns: int
    correlation_id: int
    start_ns: int | None = None
    end_ns: int | None = None

    @property
    def span_ns(self) -> int | None:
        """Device time from the launch's first node's start to its last node's end."""
        if self.start_ns is None or self.end_ns is None:
            return None
        return max(0, self.end_ns - self.start_ns)


@dataclass(frozen=True)
class Updated:
    """One cuGraphExecUpdate of an executable and the driver's answer."""

    exec_key: int
    at_ns: int
    ok: bool
    result: str  # the driver's result name, "CUDA_SUCCESS" when it applied


@dataclass(frozen=True)
class Destroyed:
    """An executable destroyed (cuGraphExecDestroy)."""

    exec_key: int
    at_ns: int


@dataclass(frozen=True)
class KernelRun:
    """One kernel's run on the device (a CUPTI CONCURRENT_KERNEL record): `graph_id` is 0 for
    a kernel launched one by one (eager) and the launching graph's id otherwise."""

    name: str
    start_ns: int
    end_ns: int
    graph_id: int
    correlation_id: int = 0

    @property
    def duration_ns(self) -> int:
        return max(0, self.end_ns - self.start_ns)


class MarkerEdge(str, Enum):
    """What an NVTX marker record marks."""

    START = "start"  # a range pushed or started (the record carries the range's name)
    END = "end"  # that range popped or ended (same marker id)
    INSTANT = "instant"  # a point mark (never a region)


@dataclass(frozen=True)
class Marker:
    """One NVTX marker record CUPTI gave (MARKER activity, NVTX injected into libcupti):
    `thread_id` and `at_ns` are CUPTI's thread id and host timestamp, on the clock of the
    launch calls below."""

    marker_id: int
    edge: MarkerEdge
    name: str
    thread_id: int
    at_ns: int


@dataclass(frozen=True)
class LaunchCall:
    """The host call that launched one eager kernel (a cudaLaunchKernel* or cuLaunchKernel*
    API activity record): which thread, when (CUPTI's host timestamp); `correlation_id`
    joins it to the kernel's run."""

    correlation_id: int
    thread_id: int
    at_ns: int


@dataclass(frozen=True)
class Recording:
    """Everything observed, in the order it happened (per kind). `markers` and
    `launch_calls` attribute eager kernels to NVTX ranges; `nvtx_unavailable` says why
    there are no markers to read (None: NVTX was routed to CUPTI)."""

    instantiated: tuple[Instantiated, ...] = ()
    launched: tuple[Launched, ...] = ()
    updated: tuple[Updated, ...] = ()
    destroyed: tuple[Destroyed, ...] = ()
    kernels: tuple[KernelRun, ...] = ()
    dropped_records: int = 0  # activity records CUPTI dropped (its buffers were full)
    markers: tuple[Marker, ...] = ()
    launch_calls: tuple[LaunchCall, ...] = ()
    nvtx_unavailable: str | None = None
