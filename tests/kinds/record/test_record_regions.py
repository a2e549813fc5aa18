"""NVTX attribution of eager kernels (issue 32, item 3): ranges from marker records, the
region of each launch call, the grouping in a recording's analysis, its certificate form and
views, and how the recorder routes NVTX to CUPTI. Synthetic events: nothing here came from a
GPU (tools/probes/nvtx_probe.py is the GPU check)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from _recordfactory import in_place
from hypothesis import given, settings
from hypothesis import strategies as st

from graphcert.kinds.record.result import RecordResult
from graphcert.recording import (
    Instantiated,
    KernelRun,
    LaunchCall,
    Launched,
    Made,
    Marker,
    MarkerEdge,
    Recording,
    analyse,
)
from graphcert.recording.processes import ProcessEnded
from graphcert.recording.regions import (
    NO_RANGES,
    OUTSIDE,
    UNJOINED,
    EagerRegion,
    NvtxRange,
    attribute,
    ranges_of,
    regions_of_calls,
)

S, E, INSTANT = MarkerEdge.START, MarkerEdge.END, MarkerEdge.INSTANT


def _m(mid: int, edge: MarkerEdge, at: int, name: str = "", thread: int = 1) -> Marker:
    return Marker(mid, edge, name, thread, at)


def test_ranges_pair_start_and_end_by_id_and_keep_an_unended_one_open() -> None:
    markers = [_m(2, S, 20, "inner"), _m(1, S, 10, "outer"), _m(2, E, 30), _m(1, E, 50),
               _m(3, INSTANT, 15, "tick"), _m(4, S, 60, "open"), _m(9, E, 70)]  # 9: no start
    assert ranges_of(markers) == (NvtxRange("outer", 1, 10, 50), NvtxRange("inner", 1, 20, 30),
                                  NvtxRange("open", 1, 60, None))


def test_a_call_gets_the_path_of_the_ranges_open_on_its_own_thread() -> None:
    ranges = ranges_of([_m(1, S, 10, "decode"), _m(2, S, 20, "attention"), _m(2, E, 30),
                        _m(1, E, 50), _m(3, S, 0, "other thread", thread=2), _m(3, E, 99)])
    calls = [LaunchCall(1, 1, 25), LaunchCall(2, 1, 40), LaunchCall(3, 1, 60),
             LaunchCall(4, 1, 20), LaunchCall(5, 1, 50), LaunchCall(6, 2, 60)]
    assert regions_of_calls(ranges, calls) == {
        1: "decode > attention", 2: "decode", 3: OUTSIDE,
        4: "decode > attention", 5: "decode",  # a range holds its own start and end instants
        6: "other thread"}


def _brute(ranges: tuple[NvtxRange, ...], call: LaunchCall) -> str:
    open_ = [r for r in ranges if r.thread_id == call.thread_id and r.start_ns <= call.at_ns
             and (r.end_ns is None or call.at_ns <= r.end_ns)]
    return " > ".join(r.name for r in open_) or OUTSIDE


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 50), st.integers(0, 30),
                          st.booleans()), max_size=12),
       st.lists(st.tuples(st.integers(0, 2), st.integers(0, 90)), max_size=12))
def test_the_sweep_agrees_with_checking_every_range(
        spans: list[tuple[int, int, int, bool]], points: list[tuple[int, int]]) -> None:
    """Against brute force: random ranges (nested or overlapping, some never ended) on three
    threads, random calls; the region path is the same (ranges in order of opening)."""
    markers = []
    for i, (thread, start, length, ended) in enumerate(spans):
        markers.append(_m(i, S, start, f"r{i}", thread))
        if ended:
            markers.append(_m(i, E, start + length, "", thread))
    ranges = ranges_of(markers)
    calls = [LaunchCall(j, thread, at) for j, (thread, at) in enumerate(points)]
    got = regions_of_calls(ranges, calls)
    assert got == {c.correlation_id: _brute(ranges, c) for c in calls}


def test_attribution_counts_eager_kernels_only_and_says_why_when_it_cannot() -> None:
    markers = [_m(1, S, 10, "fallback"), _m(1, E, 50)]
    calls = [LaunchCall(1, 1, 20), LaunchCall(2, 1, 60)]
    kernels = [KernelRun("a", 100, 110, 0, 1), KernelRun("b", 120, 125, 0, 1),
               KernelRun("c", 130, 131, 0, 2), KernelRun("d", 140, 150, 0, 7),
               KernelRun("g", 160, 190, 5, 3)]  # g: a graph's kernel, never attributed
    got = attribute(kernels, markers, calls, None)
    assert got.ranges == 1 and got.unavailable is None
    assert got.groups == (EagerRegion("fallback", 2, 15), EagerRegion(UNJOINED, 1, 10),
                          EagerRegion(OUTSIDE, 1, 1))  # most launches first, then by name
    assert attribute(kernels, markers, calls, "NVTX goes to another tool").groups == ()
    assert attribute(kernels, [], calls, None).unavailable == NO_RANGES


def _recording(with_markers: bool) -> Recording:
    """One graph replayed, eager kernels before it (warm-up) and after it (a fallback)."""
    inst = Instantiated(0, (5,), Made.CAPTURE, 0, 1000, 500)
    kernels = (KernelRun("warmup", 10, 20, 0, 1), KernelRun("g", 30, 40, 5, 2),
               KernelRun("eager_mm", 50, 60, 0, 3), KernelRun("eager_mm", 70, 80, 0, 4))
    markers = (_m(1, S, 1000, "prefill"), _m(1, E, 2000)) if with_markers else ()
    calls = (LaunchCall(1, 1, 500), LaunchCall(3, 1, 1500), LaunchCall(4, 1, 2500))
    return Recording((inst,), (Launched(0, 5, 2),), (), (), kernels, 0, markers, calls,
                     None if with_markers else "NVTX goes to another tool (X=y)")


def test_the_analysis_attributes_the_eager_kernels_of_steady_state() -> None:
    rec = analyse(_recording(True))
    assert rec.regions is not None and rec.regions.ranges == 1
    assert rec.regions.groups == (EagerRegion(OUTSIDE, 1, 10), EagerRegion("prefill", 1, 10))
    without = analyse(_recording(False)).regions
    assert without is not None and without.unavailable == "NVTX goes to another tool (X=y)"


def _result(with_markers: bool) -> RecordResult:
    return in_place(analyse(_recording(with_markers)), ("app.py",))


def test_the_certificate_keeps_the_regions_and_reads_them_back() -> None:
    from graphcert.cert.schemas import check, load_schema

    full = load_schema("record")
    results_schema = {"$defs": full["$defs"], **full["$defs"]["record"]}
    for with_markers in (True, False):
        result = _result(with_markers)
        doc = result.to_json()
        assert doc["processes"][0]["nvtx"] == doc["overall"]["nvtx"] is not None
        assert check(doc, results_schema) == []
        bad = {**doc, "processes": [doc["processes"][0] | {"nvtx": {"ranges": 1,
                                                                    "regions": []}}]}
        assert check(bad, results_schema)
        back = RecordResult.from_json(doc)
        assert back.recorded.regions == result.recorded.regions
    legacy = _legacy(_result(True)).to_json()
    assert "processes" not in legacy and "nvtx" in legacy
    del legacy["nvtx"]  # a certificate written before attribution round-trips unchanged
    assert check(legacy, results_schema) == []
    assert RecordResult.from_json(legacy).recorded.regions is None
    assert RecordResult.from_json(legacy).to_json() == legacy


def _legacy(result: RecordResult) -> RecordResult:
    """The same run as the single-process layout wrote it (its process's pid unknown)."""
    (p,) = result.processes
    info = replace(p.info, pid=None, ppid=None, gpus=(), ended=ProcessEnded.IN_PLACE)
    return replace(result, processes=(replace(p, info=info),))


def test_the_views_name_the_region_or_why_there_is_none() -> None:
    from graphcert.kinds.record.html import record_html
    from graphcert.kinds.record.views import record_rows, summary_lines

    result = _result(True)
    _, _, regions, _ = record_rows(result)
    assert ("prefill", "1", "0.000 ms") in regions
    assert dict(summary_lines(result))["NVTX"] == "1 range(s) seen"
    html = record_html(result)
    assert "by NVTX range" in html and "prefill" in html and "<svg" in html
    assert "no attribution: NVTX goes to another tool" in dict(summary_lines(_result(False)))[
        "NVTX"]


def test_nvtx_is_routed_to_the_loaded_libcupti_and_taken_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from graphcert.cupti import record

    monkeypatch.delenv(record.NVTX_ENV, raising=False)
    monkeypatch.setattr(record, "libcupti_path", lambda: "/opt/libcupti.so.13")
    why, undo = record.route_nvtx()
    assert why is None and os.environ[record.NVTX_ENV] == "/opt/libcupti.so.13"
    undo()
    assert record.NVTX_ENV not in os.environ
    monkeypatch.setenv(record.NVTX_ENV, "/opt/nsys/libToolsInjection64.so")
    why, undo = record.route_nvtx()
    assert why is not None and "another tool" in why
    undo()
    assert os.environ[record.NVTX_ENV] == "/opt/nsys/libToolsInjection64.so"  # left alone
    monkeypatch.setattr(record, "libcupti_path", lambda: None)
    monkeypatch.delenv(record.NVTX_ENV)
    assert "could not be read" in (record.route_nvtx()[0] or "")


def test_marker_records_become_edges_and_sync_markers_are_dropped() -> None:
    from graphcert.cupti.activity import MarkerRecord
    from graphcert.cupti.record import marker_event

    assert marker_event(MarkerRecord("step", 3, 10, 2, "", 7)) == Marker(3, S, "step", 7, 10)
    assert marker_event(MarkerRecord("", 3, 20, 4, "", 7)) == Marker(3, E, "", 7, 20)
    assert marker_event(MarkerRecord("tick", 4, 30, 1, "", 7)) == Marker(4, INSTANT, "tick", 7, 30)
    assert marker_event(MarkerRecord("lock", 5, 40, 8, "", 7)) is None  # sync acquire
