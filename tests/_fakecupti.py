"""A fake `cupti` package (cupti-python's shape: the API in `cupti.cupti`) for CPU tests of
graphcert.cupti and graphcert.run.profile. Synthetic: nothing here came from a GPU.

Records are plain objects with the attribute names of cupti's ActivityKernel10 /
ActivityMemcpy6 / ActivityMemset4 / ActivityMarker2; `pending` is delivered to the registered
buffer-completed callback on activity_flush_all, as CUPTI delivers its buffers."""

from __future__ import annotations

import ctypes
import enum
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest


class ActivityKind(enum.IntEnum):
    MEMCPY = 1
    MEMSET = 2
    KERNEL = 3
    DRIVER = 4
    RUNTIME = 5
    CONCURRENT_KERNEL = 10
    MARKER = 12
    MEMORY2 = 49
    GRAPH_TRACE = 51


class ActivityMemcpyKind(enum.IntEnum):
    UNKNOWN = 0
    HTOD = 1
    DTOH = 2
    DTOD = 8


class RuntimeApiTraceCbid(enum.IntEnum):
    cudaMalloc_v3020 = 20
    cudaLaunchKernel_v7000 = 211
    cudaLaunchKernelExC_v11060 = 430


class DriverApiTraceCbid(enum.IntEnum):
    cuMemAlloc_v2 = 5
    cuLaunchKernel = 307
    cuGraphLaunch = 514


class cuptiError(Exception):  # noqa: N801 (cupti's own name)
    def __init__(self, name: str, code: int = 39):
        super().__init__(f"{name} ({code})")


class FakeCupti(types.ModuleType):
    """The fake `cupti.cupti` module, with what the test set it up to do."""

    ActivityKind = ActivityKind
    ActivityMemcpyKind = ActivityMemcpyKind
    RuntimeApiTraceCbid = RuntimeApiTraceCbid
    DriverApiTraceCbid = DriverApiTraceCbid
    cuptiError = cuptiError

    def __init__(self) -> None:
        super().__init__("cupti.cupti")
        self.pending: list[Any] = []
        self.enabled: list[int] = []
        self.registered: tuple[Any, Any] | None = None
        self.registrations = 0
        self.fail_enable: dict[int, str] = {}  # kind -> cupti.Result name to raise
        self.dropped = 0
        self.node_ids: dict[int, int] = {}
        self.api_enabled: set[tuple[bool, int]] = set()  # (runtime?, cbid) with records on

    def activity_register_callbacks(self, requested: Any, completed: Any) -> None:
        self.registered = (requested, completed)
        self.registrations += 1

    def activity_enable(self, kind: int) -> None:
        if int(kind) in self.fail_enable:
            raise cuptiError(self.fail_enable[int(kind)])
        self.enabled.append(int(kind))

    def activity_disable(self, kind: int) -> None:
        self.enabled.remove(int(kind))

    def _api(self, runtime: bool, cbid: int, enable: int) -> None:
        (self.api_enabled.add if enable else self.api_enabled.discard)((runtime, int(cbid)))

    def activity_enable_runtime_api(self, cbid: int, enable: int) -> None:
        self._api(True, cbid, enable)

    def activity_enable_driver_api(self, cbid: int, enable: int) -> None:
        self._api(False, cbid, enable)

    def activity_flush_all(self, flag: int) -> None:
        assert self.registered is not None
        size, _ = self.registered[0]()
        assert size > 0
        batch, self.pending = self.pending, []
        if batch:
            self.registered[1](batch)

    def activity_get_num_dropped_records(self, context: int, stream: int, out: int) -> None:
        ctypes.c_size_t.from_address(out).value = self.dropped
        self.dropped = 0

    def get_graph_node_id(self, node: int) -> int:
        return self.node_ids.get(int(node), (1 << 32) | int(node))

    def get_graph_id(self, graph: int) -> int:
        return 1

    def get_graph_exec_id(self, graph_exec: int) -> int:
        return 500 + int(graph_exec)


def kernel(name: str, start: int, end: int, *, graph_id: int = 1, node: int = 0,
           corr: int = 1, stream: int = 7) -> SimpleNamespace:
    return SimpleNamespace(kind=ActivityKind.CONCURRENT_KERNEL, name=name, start=start,
                           end=end, graph_id=graph_id, graph_node_id=node,
                           correlation_id=corr, stream_id=stream, device_id=0, context_id=1)


def memcpy(start: int, end: int, copy: int = ActivityMemcpyKind.HTOD, **kw: Any
           ) -> SimpleNamespace:
    rec = kernel("", start, end, **kw)
    rec.kind, rec.copy_kind = ActivityKind.MEMCPY, copy
    del rec.name
    return rec


def memset(start: int, end: int, **kw: Any) -> SimpleNamespace:
    rec = kernel("", start, end, **kw)
    rec.kind = ActivityKind.MEMSET
    del rec.name
    return rec


def graph_launch(graph_id: int, start: int, end: int, corr: int = 1) -> SimpleNamespace:
    """ActivityGraphTrace's shape: one launch of an executable, first node start to last end."""
    return SimpleNamespace(kind=ActivityKind.GRAPH_TRACE, graph_id=graph_id, start=start,
                           end=end, correlation_id=corr, device_id=0, context_id=1,
                           stream_id=7)


def marker(name: str, ts: int, marker_id: int = 1, *, flags: int = 2, thread: int = 0
           ) -> SimpleNamespace:
    """ActivityMarker2's shape: flags_ 2 starts a range, 4 ends it (its name empty), 1 marks
    an instant; object_id.pt names the marking thread."""
    return SimpleNamespace(kind=ActivityKind.MARKER, name=name, id=marker_id, timestamp=ts,
                           flags_=flags, domain="",
                           object_id=SimpleNamespace(pt=SimpleNamespace(process_id=1,
                                                                        thread_id=thread)))


def api(corr: int, thread: int, start: int, *, runtime: bool = True) -> SimpleNamespace:
    """ActivityAPI's shape: one API call (a kernel launch) on a thread."""
    return SimpleNamespace(kind=ActivityKind.RUNTIME if runtime else ActivityKind.DRIVER,
                           cbid=211 if runtime else 307, correlation_id=corr,
                           thread_id=thread, start=start, end=start + 3, process_id=1)


@contextmanager
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeCupti]:
    """Install a fresh fake as `cupti` / `cupti.cupti` for the test's duration."""
    fake = FakeCupti()
    package = types.ModuleType("cupti")
    package.cupti = fake  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cupti", package)
    monkeypatch.setitem(sys.modules, "cupti.cupti", fake)
    yield fake
