"""graphcert.cupti with a fake cupti module (tests/_fakecupti.py, synthetic records): record
conversion, collection through the buffer callbacks, the dropped count, and each way CUPTI
can be unavailable as one line with exit 2."""

from __future__ import annotations

import importlib

import pytest

from graphcert.cupti import library
from graphcert.cupti.activity import (
    Activity,
    DeviceRecord,
    GraphLaunchRecord,
    LaunchCallRecord,
    MarkerRecord,
    convert,
    launch_cbids,
)
from graphcert.cupti.library import CuptiUnavailable
from graphcert.cupti.nodes import node_id
from graphcert.errors import ExitStatus, GraphcertError
from graphcert.model import NodeKind
from tests import _fakecupti as fc


def test_conversion_of_each_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    with fc.installed(monkeypatch) as fake:
        k = convert(fake, fc.kernel("_Z4stepPf", 100, 250, node=(2 << 32) | 5, corr=9))
        assert k == DeviceRecord(NodeKind.KERNEL, "_Z4stepPf", 100, 250, 1, (2 << 32) | 5, 9,
                                 7, 0, 1)
        assert k.in_graph and k.activity().node_id == 5 and k.activity().graph_instance == 2
        eager = convert(fake, fc.kernel("eager", 1, 2, graph_id=0, node=0))
        assert isinstance(eager, DeviceRecord) and not eager.in_graph
        copy = convert(fake, fc.memcpy(5, 9, fc.ActivityMemcpyKind.DTOH))
        assert isinstance(copy, DeviceRecord)
        assert (copy.kind, copy.name, copy.end_ns - copy.start_ns) == (NodeKind.MEMCPY,
                                                                        "memcpy DTOH", 4)
        odd = convert(fake, fc.memcpy(5, 9, 99))  # a copy kind newer than this list
        assert isinstance(odd, DeviceRecord) and odd.name == "memcpy 99"
        mset = convert(fake, fc.memset(3, 4))
        assert isinstance(mset, DeviceRecord) and (mset.kind, mset.name) == (NodeKind.MEMSET,
                                                                             "memset")
        mark = convert(fake, fc.marker("decode", 77, 4, thread=31))
        assert mark == MarkerRecord("decode", 4, 77, 2, "", 31)
        call = convert(fake, fc.api(9, 31, 70))
        assert call == LaunchCallRecord(9, 31, 70)
        assert convert(fake, fc.api(10, 31, 71, runtime=False)) == LaunchCallRecord(10, 31, 71)
        launch = fc.kernel("x", 1, 2, graph_id=6, corr=8)
        launch.kind = fc.ActivityKind.GRAPH_TRACE  # one record of a whole graph launch
        assert convert(fake, launch) == GraphLaunchRecord(6, 8, 1, 2)
        other = fc.kernel("x", 1, 2)
        other.kind = fc.ActivityKind.MEMORY2  # a kind graphcert does not keep
        assert convert(fake, other) is None


def test_activity_collects_flushes_and_disables(monkeypatch: pytest.MonkeyPatch) -> None:
    with fc.installed(monkeypatch) as fake:
        with Activity(markers=True) as act:
            assert sorted(fake.enabled) == sorted(
                int(k) for k in (fc.ActivityKind.CONCURRENT_KERNEL, fc.ActivityKind.MEMCPY,
                                 fc.ActivityKind.MEMSET, fc.ActivityKind.MARKER))
            assert fc.ActivityKind.GRAPH_TRACE not in fake.enabled  # per-node records need it off
            fake.pending += [fc.kernel("a", 0, 5, node=1), fc.marker("m", 3)]
            assert [r.name for r in act.take()] == ["a"]  # flushed and handed over
            fake.pending += [fc.kernel("b", 5, 9, node=2), fc.memset(9, 10, node=3)]
            fake.dropped = 4
        assert fake.enabled == []
        assert [r.name for r in act.records] == ["b", "memset"]  # the exit flushed them
        assert [m.name for m in act.markers] == ["m"]
        assert act.dropped == 4
        fake.pending.append(fc.kernel("late", 1, 2))  # after the block: nobody collects it
        fake.activity_flush_all(1)
        assert [r.name for r in act.records] == ["b", "memset"]
        with Activity() as again:  # callbacks registered once per process and module
            fake.pending.append(fc.kernel("c", 1, 2))
        assert [r.name for r in again.records] == ["c"] and fake.registrations == 1
        assert fc.ActivityKind.MARKER not in fake.enabled


def test_an_error_in_the_block_wins_and_nothing_stays_enabled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with fc.installed(monkeypatch) as fake:
        with pytest.raises(ZeroDivisionError), Activity():
            1 / 0  # noqa: B018
        assert fake.enabled == []


def test_nested_collection_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with fc.installed(monkeypatch), Activity(), pytest.raises(GraphcertError, match="already"):
        with Activity():
            pass


@pytest.mark.parametrize(("status", "said"), [
    ("ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED", "held by another profiler"),
    ("ERROR_NOT_COMPATIBLE", "driver refuses this CUPTI"),
    ("ERROR_INSUFFICIENT_PRIVILEGES", "may not profile"),
    ("ERROR_UNKNOWN", "CUPTI failed"),
])
def test_enable_refused_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch, status: str,
                                           said: str) -> None:
    with fc.installed(monkeypatch) as fake:
        fake.fail_enable[int(fc.ActivityKind.MEMSET)] = status  # the third kind enabled
        with pytest.raises(CuptiUnavailable) as info, Activity():
            pass
        assert fake.enabled == []  # the two enabled before it were disabled again
    line = info.value.one_line()
    assert said in line and status in line and "\n" not in line
    assert info.value.exit_code == ExitStatus.UNUSABLE


def test_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "cupti", None)
    monkeypatch.setitem(__import__("sys").modules, "cupti.cupti", None)  # imported earlier
    with pytest.raises(CuptiUnavailable, match="not installed") as info:
        library.load()
    assert "pip install" in info.value.one_line() and info.value.exit_code == 2


def test_library_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_lib(name: str) -> object:
        raise OSError("libcupti.so.13: cannot open shared object file")

    monkeypatch.setattr(importlib, "import_module", no_lib)
    with pytest.raises(CuptiUnavailable, match="could not be loaded") as info:
        library.load()
    assert "libcupti" in info.value.one_line() and "nvidia-cuda-cupti" in info.value.one_line()


def test_no_driver_is_exit_3(monkeypatch: pytest.MonkeyPatch) -> None:
    with fc.installed(monkeypatch) as fake:
        def no_driver(req: object, comp: object) -> None:
            raise RuntimeError("CUDA driver is not found (libcuda.so.1: cannot open shared "
                               "object file)")

        monkeypatch.setattr(fake, "activity_register_callbacks", no_driver)
        monkeypatch.setattr("graphcert.cupti.activity._REGISTERED_WITH", [])
        with pytest.raises(GraphcertError, match="no NVIDIA driver") as info, Activity():
            pass
    assert info.value.exit_code == ExitStatus.NO_GPU


def test_node_ids_and_version(monkeypatch: pytest.MonkeyPatch) -> None:
    with fc.installed(monkeypatch) as fake:
        fake.node_ids[0xABC] = (1 << 32) | 3
        assert node_id(0xABC) == (1 << 32) | 3
    v = library.version()
    assert v == 0 or (v >= 13000 and v % 10 == 0)


def test_small_buffer_refused() -> None:
    with pytest.raises(GraphcertError, match="too small"):
        Activity(buffer_bytes=100)


def test_launch_calls_are_enabled_per_api_and_collected_then_disabled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """launch_calls=True asks CUPTI for API records of the kernel-launch calls only (never
    the whole RUNTIME or DRIVER kinds), hands them over, and turns them off at exit."""
    with fc.installed(monkeypatch) as fake:
        assert launch_cbids(fake) == [(False, 307), (True, 211), (True, 430)]
        with Activity(markers=True, launch_calls=True) as act:
            assert fake.api_enabled == {(False, 307), (True, 211), (True, 430)}
            assert int(fc.ActivityKind.RUNTIME) not in fake.enabled
            fake.pending += [fc.kernel("k", 5, 9, graph_id=0, corr=3), fc.api(3, 8, 4),
                             fc.marker("step", 1, 2, thread=8)]
        assert fake.api_enabled == set()
        assert act.launch_calls == (LaunchCallRecord(3, 8, 4),)
        assert [m.thread_id for m in act.markers] == [8]
        assert [r.correlation_id for r in act.records] == [3]


def test_graph_trace_alone_for_span_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """kernels=False, copies=False: GRAPH_TRACE is the one kind enabled, and its launch
    records are collected (synthetic records)."""
    with fc.installed(monkeypatch) as fake:
        with Activity(graph_trace=True, kernels=False, copies=False) as act:
            assert fake.enabled == [int(fc.ActivityKind.GRAPH_TRACE)]
            fake.pending += [fc.graph_launch(503, 100, 900, corr=4)]
        assert fake.enabled == []
        assert act.graph_launches == (GraphLaunchRecord(503, 4, 100, 900),)
        assert act.records == ()
