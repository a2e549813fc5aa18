"""merge() of processes' analyses and process_recorded(), over SYNTHETIC recordings (events
built here, nothing recorded on a GPU): hand cases and a property over random runs."""

from __future__ import annotations

from functools import cache

from hypothesis import given
from hypothesis import strategies as st

from graphcert.model import GraphSnapshot, NodeKind, RawGraph, RawNode, snapshot_from_raw
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
)
from graphcert.recording.analysis import MAX_EAGER_GROUPS, Coverage
from graphcert.recording.processes import (
    ProcessEnded,
    ProcessInfo,
    ProcessRecorded,
    merge,
    process_recorded,
)
from graphcert.recording.regions import NO_RANGES


@cache
def graph(name: str) -> GraphSnapshot:
    """A synthetic one-kernel graph."""
    return snapshot_from_raw(RawGraph((RawNode(0, NodeKind.KERNEL, {"name": name}),), ()))


def info(pid: int) -> ProcessInfo:
    return ProcessInfo(pid, 1, ("synthetic",), (), ProcessEnded.EXIT)


def inst(key: int, name: str, at: int) -> Instantiated:
    return Instantiated(key, (100 + key,), Made.CAPTURE, at, 10, 5, graph(name))


def proc(pid: int, rec: Recording) -> ProcessRecorded:
    return process_recorded(info(pid), rec)


def recapturing(pid: int) -> ProcessRecorded:
    """Synthetic: graph "a" made, destroyed and made again (churn); graph "b" once."""
    return proc(pid, Recording(
        instantiated=(inst(0, "b", 0), inst(1, "a", 10), inst(2, "a", 30)),
        launched=(Launched(1, 40, 7, 1_000, 1_100),),
        destroyed=(Destroyed(1, 20),),
        kernels=(KernelRun("eager_x", 1_200, 1_210, 0, 1), KernelRun("eager_y", 500, 510, 0),
                 KernelRun("eager_y", 1_300, 1_330, 0)),
        dropped_records=2, nvtx_unavailable="synthetic: no NVTX"))


def test_process_recorded_runs_the_analysis() -> None:
    p = recapturing(7)
    assert p.info.pid == 7 and len(p.recorded.graphs) == 3
    assert p.recorded.churn[0].rows == (1, 2)
    assert all(r.pid is None for r in p.recorded.graphs)  # set by merge, not by analyse


def test_merge_keeps_churn_per_process_and_renumbers() -> None:
    a, b = recapturing(10), recapturing(20)
    got = merge([a, b])
    assert [(r.index, r.pid) for r in got.graphs] == [(0, 10), (1, 10), (2, 10), (3, 20),
                                                     (4, 20), (5, 20)]
    assert [c.rows for c in got.churn] == [(1, 2), (4, 5)]  # "b" in both is not churn
    assert got.dropped_records == 4
    assert got.overall == Coverage(2, 6, 200, 2 * (10 + 10 + 30))
    assert got.steady == Coverage(2, 4, 200, 2 * (10 + 30))
    assert [(g.name, g.count, g.total_ns) for g in got.steady_eager] == [
        ("eager_x", 2, 20), ("eager_y", 2, 60)]
    assert got.regions is not None and got.regions.unavailable == "synthetic: no NVTX"


def test_merge_steady_over_those_that_have_one() -> None:
    eager_only = proc(3, Recording(kernels=(KernelRun("e", 0, 5, 0),)))
    assert eager_only.recorded.steady is None
    got = merge([eager_only, recapturing(4)])
    assert got.steady == recapturing(4).recorded.steady
    assert got.overall.eager_kernels == 4
    assert merge([eager_only]).steady is None


def test_merge_regions_and_eager_limits() -> None:
    def with_ranges(pid: int, region: str) -> ProcessRecorded:
        return proc(pid, Recording(
            kernels=(KernelRun("graph_kernel", 0, 1, 5),  # steady state from here
                     *(KernelRun(f"k{i}", 10, 11, 0, 50 + i) for i in range(MAX_EAGER_GROUPS))),
            markers=(Marker(1, MarkerEdge.START, region, 9, 0),
                     Marker(1, MarkerEdge.END, "", 9, 100)),
            launch_calls=tuple(LaunchCall(50 + i, 9, 5) for i in range(MAX_EAGER_GROUPS))))
    silent = proc(5, Recording(kernels=(KernelRun("k0", 1, 2, 0),)))
    assert silent.recorded.regions is not None
    assert silent.recorded.regions.unavailable == NO_RANGES
    got = merge([silent, with_ranges(6, "decode"), with_ranges(7, "prefill"),
                 with_ranges(8, "decode")])
    assert got.regions is not None and got.regions.unavailable is None
    assert got.regions.ranges == 3
    assert [(g.region, g.count) for g in got.regions.groups] == [
        ("decode", 2 * MAX_EAGER_GROUPS), ("prefill", MAX_EAGER_GROUPS)]
    assert len(got.steady_eager) == MAX_EAGER_GROUPS
    assert got.steady_eager[0] == type(got.steady_eager[0])("k0", 3, 3)
    assert merge([silent]).regions == silent.recorded.regions


def test_merge_of_nothing() -> None:
    got = merge([])
    assert (got.graphs, got.overall, got.steady, got.churn, got.regions) == (
        (), Coverage(0, 0, 0, 0), None, (), None)


@st.composite
def recordings(draw: st.DrawFn) -> Recording:
    """A synthetic process: graphs of two names made (and some destroyed), launched, and
    eager or graph kernels."""
    made = draw(st.lists(st.tuples(st.sampled_from("ab"), st.booleans()), max_size=6))
    insts = tuple(inst(i, name, 10 * i) for i, (name, _) in enumerate(made))
    destroyed = tuple(Destroyed(i, 10 * i + 5) for i, (_, gone) in enumerate(made) if gone)
    kernels = tuple(KernelRun(draw(st.sampled_from(["x", "y", "z"])), start, start + dur,
                              draw(st.sampled_from([0, 0, 101])))
                    for start, dur in draw(st.lists(st.tuples(st.integers(0, 1000),
                                                              st.integers(0, 50)), max_size=8)))
    launched = tuple(Launched(k, 0, 900 + k, 100 * k, 100 * k + 7)
                     for k in draw(st.lists(st.integers(0, max(0, len(insts) - 1)),
                                            max_size=4)) if insts)
    return Recording(insts, launched, (), destroyed, kernels, draw(st.integers(0, 3)))


@given(st.lists(recordings(), max_size=4))
def test_merge_property(recs: list[Recording]) -> None:
    processes = [proc(1000 + i, r) for i, r in enumerate(recs)]
    got = merge(processes)
    parts = [p.recorded for p in processes]
    assert len(got.graphs) == sum(len(r.graphs) for r in parts)
    assert [r.index for r in got.graphs] == list(range(len(got.graphs)))
    for field in ("graph_kernels", "eager_kernels", "graph_ns", "eager_ns"):
        assert getattr(got.overall, field) == sum(getattr(r.overall, field) for r in parts)
        steady = [getattr(r.steady, field) for r in parts if r.steady is not None]
        assert (got.steady is None) == (not steady)
        if got.steady is not None:
            assert getattr(got.steady, field) == sum(steady)
    assert got.dropped_records == sum(r.dropped_records for r in parts)
    assert len(got.churn) == sum(len(r.churn) for r in parts)
    for c in got.churn:
        rows = [got.graphs[i] for i in c.rows]
        assert len({r.pid for r in rows}) == 1  # churn never joins two processes
        assert {r.topology_hash for r in rows} == {c.topology_hash}
