"""graphcert.recording.streams over SYNTHETIC collector streams (tests/_streamwriter.py):
each record type, the ends of a process, torn and unreadable lines, and a run folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from _streamwriter import T0, SyntheticStream, chain, kernel_node

from graphcert.errors import InputError
from graphcert.recording import Made, MarkerEdge
from graphcert.recording.processes import GpuSeen, GraphMemory, ProcessEnded
from graphcert.recording.streams import read_run, read_stream


def _one_graph(s: SyntheticStream) -> SyntheticStream:
    s.device(0)
    s.add("capture_begin", stream=7, at=T0 + 100)
    s.add("capture_end", stream=7, graph=0xA0, at=T0 + 400)
    s.inst(0xE0, 0xA0, 11, at=500, dur=80)
    s.glaunch(11, corr=5, start=2_000, end=2_600)
    s.kernel("synthetic_eager", 1_000, 1_100)
    return s


def test_every_host_record(tmp_path: Path) -> None:
    s = _one_graph(SyntheticStream(pid=10, ppid=3, argv=("python", "synthetic.py")))
    s.add("update", exec=0xE0, at=T0 + 900, code=0, result="CUDA_SUCCESS")
    s.add("update", exec=0xE0, at=T0 + 950, code=910, result="CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE")
    s.add("destroy", exec=0xE0, at=T0 + 1_000)
    s.add("graphmem", ordinal=0, used_current=1, used_high=2, reserved_current=3,
          reserved_high=4)
    got = read_stream(s.end().write(tmp_path))
    info = got.process.info
    assert (info.pid, info.ppid, info.argv) == (10, 3, ("python", "synthetic.py"))
    assert info.gpus == (GpuSeen(0, "GPU-synthetic-0", "Synthetic GPU"),)
    assert (info.ended, info.exit_code, info.problems) == (ProcessEnded.EXIT, None, ())
    assert (got.cupti_version, got.collector) == (130000, "synthetic0")
    inst, = got.recording.instantiated
    assert (inst.exec_key, inst.graph_ids, inst.made, inst.at_ns, inst.instantiate_ns,
            inst.capture_ns) == (0, (11, 1011), Made.CAPTURE, 500, 80, 300)
    assert inst.snapshot is not None and inst.snapshot.node_count == 2
    assert inst.snapshot.meta == {"source": "record"}
    assert [(u.exec_key, u.at_ns, u.ok, u.result) for u in got.recording.updated] == [
        (0, 900, True, "CUDA_SUCCESS"), (0, 950, False, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE")]
    assert [(d.exec_key, d.at_ns) for d in got.recording.destroyed] == [(0, 1_000)]
    launch, = got.recording.launched
    assert (launch.exec_key, launch.correlation_id, launch.start_ns, launch.end_ns,
            launch.at_ns) == (0, 5, 2_000, 2_600, max(0, 2_000 - T0))
    assert got.process.graph_memory == (GraphMemory(1, 2, 3, 4),)
    assert got.process.memory_reason is None
    row, = got.process.recorded.graphs
    assert (row.launches, row.updates, row.failed_updates, row.destroyed_at_ns) == (1, 2, 1,
                                                                                   1_000)


def test_kernels_calls_markers_and_dropped(tmp_path: Path) -> None:
    s = SyntheticStream()
    s.kernel("synthetic_gemm", 50, 70, graph_id=0, corr=1)  # eager, in steady state
    s.kernel("synthetic_gemm", 40, 45, graph_id=9, corr=2)
    s.add("call", corr=1, tid=77, at=5)
    name = s.string("synthetic range")
    s.add("marker", id=3, edge="start", name=name, tid=77, at=1)
    s.add("marker", id=3, edge="end", name=0, tid=77, at=8)
    s.add("marker", id=4, edge="instant", name=name, tid=77, at=9)
    s.add("dropped", n=3).add("dropped", n=4)
    rec = read_stream(s.end().write(tmp_path), nvtx_unavailable=None).recording
    assert [(k.name, k.start_ns, k.end_ns, k.graph_id, k.correlation_id) for k in rec.kernels] \
        == [("synthetic_gemm", 50, 70, 0, 1), ("synthetic_gemm", 40, 45, 9, 2)]
    assert [(c.correlation_id, c.thread_id, c.at_ns) for c in rec.launch_calls] == [(1, 77, 5)]
    assert [(m.marker_id, m.edge, m.name) for m in rec.markers] == [
        (3, MarkerEdge.START, "synthetic range"), (3, MarkerEdge.END, ""),
        (4, MarkerEdge.INSTANT, "synthetic range")]
    assert rec.dropped_records == 7
    got = read_stream(s.write(tmp_path)).process.recorded
    assert got.regions is not None and got.regions.groups[0].region == "synthetic range"


def test_explicit_graph_and_snapshot_refused(tmp_path: Path) -> None:
    s = SyntheticStream()
    s.inst(1, 2, 3, at=10, snapshot={"nodes": [kernel_node(grid=[1, 1])], "edges": []})
    s.inst(4, 5, None, at=20, read_error="synthetic: cuGraphGetNodes failed")
    s.inst(6, 7, 8, at=30, snapshot={"nodes": [{"type": 5}, {"type": 5}],
                                     "edges": [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0]]})
    s.kernel("k", 1, 2)
    a, b, c = read_stream(s.end().write(tmp_path)).recording.instantiated
    assert (a.made, a.snapshot, b.graph_ids, b.snapshot) == (Made.EXPLICIT, None, (), None)
    assert a.read_error is not None and "'grid'" in a.read_error
    assert b.read_error == "synthetic: cuGraphGetNodes failed"
    assert c.snapshot is None and c.read_error is not None and "not a graph" in c.read_error


def test_capture_pairs_per_stream(tmp_path: Path) -> None:
    s = SyntheticStream()
    s.add("capture_begin", stream=1, at=T0 + 100)
    s.add("capture_begin", stream=2, at=T0 + 150)
    s.add("capture_end", stream=2, graph=20, at=T0 + 170)
    s.add("capture_end", stream=1, graph=10, at=T0 + 400)
    s.add("capture_end", stream=3, graph=30, at=T0 + 500)  # its begin was never heard
    for handle, graph in ((1, 10), (2, 20), (3, 30), (4, 40)):
        s.inst(handle, graph, handle, at=600 + handle)
    s.kernel("k", 1, 2)
    got = read_stream(s.end().write(tmp_path)).recording.instantiated
    assert [(i.made, i.capture_ns) for i in got] == [
        (Made.CAPTURE, 300), (Made.CAPTURE, 20), (Made.CAPTURE, None), (Made.EXPLICIT, None)]


def test_exec_handle_reuse_and_unknown_handles(tmp_path: Path) -> None:
    s = SyntheticStream()
    s.inst(0xE0, 1, 100, at=10)
    s.add("destroy", exec=0xE0, at=T0 + 20)
    s.inst(0xE0, 2, 101, at=30)  # the driver reused the handle: a new key
    s.add("update", exec=0xE0, at=T0 + 40, code=0, result="CUDA_SUCCESS")
    s.add("update", exec=0xBAD, at=T0 + 41, code=0, result="CUDA_SUCCESS")
    s.add("destroy", exec=0xBAD, at=T0 + 42)
    s.glaunch(100, 1, 50, 60).glaunch(101, 2, 70, 80).glaunch(999, 3, 90, 95)
    rec = read_stream(s.end().write(tmp_path)).recording
    assert [i.exec_key for i in rec.instantiated] == [0, 1]
    assert [d.exec_key for d in rec.destroyed] == [0]
    assert [u.exec_key for u in rec.updated] == [1]
    assert [(x.exec_key, x.correlation_id) for x in rec.launched] == [(0, 1), (1, 2)]


def test_torn_last_line(tmp_path: Path) -> None:
    s = SyntheticStream().kernel("k", 1, 2)
    killed = read_stream(s.write(tmp_path, torn='{"t":"kernel","na'))
    assert killed.process.info.ended is ProcessEnded.KILLED
    assert killed.process.info.problems == ()
    assert len(killed.recording.kernels) == 1
    # only the newline was lost: the line is whole and counts
    whole = read_stream(s.write(tmp_path, torn='{"t":"end","how":"exit","code":null,"at":5}'))
    assert whole.process.info.ended is ProcessEnded.EXIT
    assert whole.process.info.problems == ()
    # a torn line in a stream whose process ended by itself is a line that could not be read
    torn = read_stream(s.end().write(tmp_path, torn='{"t":"ker'))
    assert torn.process.info.problems == ("1 line(s) of the stream could not be read",)


def test_unreadable_lines_counted(tmp_path: Path) -> None:
    s = SyntheticStream().kernel("k", 1, 2)
    s.raw("not json").raw("[1, 2]").raw('{"t": "kernel", "name": "x"}').raw('{"no": "t"}')
    s.add("kernel", name=1, start=True, end=2, graph_id=0, corr=0, device=0)  # a bool time
    s.add("marker", id=1, edge="sideways", name=0, tid=1, at=1)
    s.add("someday_record", x=1)
    s.add("__init__", x=1)  # a type that names no handler, whatever the reader's insides
    got = read_stream(s.end().write(tmp_path)).process.info
    assert got.problems == (
        "6 line(s) of the stream could not be read",
        "2 line(s) of record types this graphcert does not know were skipped "
        "(__init__, someday_record)")


def test_no_end_line_killed_or_outlived(tmp_path: Path) -> None:
    path = SyntheticStream().kernel("k", 1, 2).write(tmp_path)
    killed = read_stream(path).process
    assert (killed.info.ended, killed.info.exit_code) == (ProcessEnded.KILLED, None)
    assert killed.memory_reason is not None and "no end line" in killed.memory_reason
    outlived = read_stream(path, outlived=True).process.info
    assert outlived.ended is ProcessEnded.OUTLIVED
    assert read_stream(path, exit_code=-9).process.info.exit_code == -9


def test_exit_now_carries_its_code(tmp_path: Path) -> None:
    path = SyntheticStream().kernel("k", 1, 2).end("_exit", 3).write(tmp_path)
    got = read_stream(path).process.info
    assert (got.ended, got.exit_code) == (ProcessEnded.EXIT_NOW, 3)
    assert read_stream(path, exit_code=0).process.info.exit_code == 0  # the runner knows
    exited = SyntheticStream().end("exit").write(tmp_path / "b")
    assert read_stream(exited, exit_code=1).process.info.ended is ProcessEnded.EXIT
    assert read_stream(exited, outlived=True).process.info.ended is ProcessEnded.EXIT


def test_graph_memory_the_driver_did_not_give_is_not_read_with_a_reason(tmp_path: Path
                                                                        ) -> None:
    # SYNTHETIC: the collector writes null where cuDeviceGetGraphMemAttribute fails
    s = SyntheticStream().device(0).device(1)
    s.add("graphmem", ordinal=0, used_current=1, used_high=2, reserved_current=3,
          reserved_high=4)
    s.add("graphmem", ordinal=1, used_current=None, used_high=None, reserved_current=None,
          reserved_high=None)
    got = read_stream(s.end().write(tmp_path)).process
    assert got.info.problems == ()  # not an unreadable line
    assert got.graph_memory == (GraphMemory(1, 2, 3, 4),)
    assert got.memory_reason is not None and "device(s) 1" in got.memory_reason
    assert "not read" in got.memory_reason
    alone = SyntheticStream().device(0)
    alone.add("graphmem", ordinal=0, used_current=5, used_high=None, reserved_current=None,
              reserved_high=None)
    only = read_stream(alone.end().write(tmp_path / "b")).process
    assert (only.graph_memory, only.info.problems) == ((), ())
    assert only.memory_reason is not None and "device(s) 0" in only.memory_reason


def test_cupti_refused_and_taken(tmp_path: Path) -> None:
    s = SyntheticStream()
    s.add("error", what="cuptiSubscribe", result="CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED",
          detail="another profiler holds CUPTI")
    assert read_stream(s.end().write(tmp_path)).process.info.problems == (
        "CUPTI refused the collector: cuptiSubscribe gave "
        "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (another profiler holds CUPTI)",)
    taken = SyntheticStream().inst(1, 2, 3, at=5).inst(4, 5, 6, at=9)
    assert read_stream(taken.end().write(tmp_path / "t")).process.info.problems == (
        "made 2 graph(s) but no kernel or graph-launch record reached graphcert: another "
        "CUPTI client (a profiler in the program?) took CUPTI's activity records",)
    # killed before CUPTI handed its buffers over: said, but not blamed on a profiler
    killed = read_stream(SyntheticStream().inst(1, 2, 3, at=5).write(tmp_path / "k"))
    problem, = killed.process.info.problems
    assert "ended without an end line" in problem
    # a graph launch record is an activity record too
    fine = SyntheticStream().inst(1, 2, 3, at=5).glaunch(3, 1, 10, 20).end()
    assert read_stream(fine.write(tmp_path / "f")).process.info.problems == ()


def test_a_part_left_off_for_a_benchmark_makes_the_record_incomplete(tmp_path: Path
                                                                      ) -> None:
    s = SyntheticStream()
    s.add("error", what="GRAPHCERT_COLLECTOR_OFF", result="SUCCESS", detail="kernels")
    assert read_stream(s.end().write(tmp_path)).process.info.problems == (
        "kernels left off by GRAPHCERT_COLLECTOR_OFF: the record is incomplete",)


def test_undefined_string_and_no_process_line(tmp_path: Path) -> None:
    s = SyntheticStream().add("kernel", name=99, start=1, end=2, graph_id=0, corr=0, device=0)
    got = read_stream(s.end().write(tmp_path))
    assert got.recording.kernels[0].name == "(string 99 not in the stream)"
    assert got.process.info.problems == ("1 string id(s) were used but never defined in the "
                                         "stream",)
    empty = SyntheticStream(pid=55, head=False).write(tmp_path / "e")
    bare = read_stream(empty)
    assert (bare.process.info.pid, bare.wall_ns, bare.process.info.ended) == (
        55, None, ProcessEnded.KILLED)
    assert "no process line" in bare.process.info.problems[0]


def test_read_run_orders_and_applies_what_the_runner_knows(tmp_path: Path) -> None:
    run = tmp_path / "run"
    SyntheticStream(pid=30, wall_ns=300).kernel("k", 1, 2).write(run)
    SyntheticStream(pid=10, wall_ns=100).kernel("k", 1, 2).end().write(run)
    SyntheticStream(pid=20, wall_ns=200).kernel("k", 1, 2).write(run)
    SyntheticStream(pid=20, wall_ns=400, start=999).kernel("k", 1, 2).write(run)  # reused pid
    (run / "notes.txt").write_text("not a stream")
    got = read_run(run, outlived=frozenset({20}), exit_codes={10: 0, 20: -9},
                   nvtx_unavailable="synthetic: NVTX not routed")
    assert [(s.process.info.pid, s.wall_ns) for s in got] == [
        (10, 100), (20, 200), (30, 300), (20, 400)]
    assert [(s.process.info.ended, s.process.info.exit_code) for s in got] == [
        (ProcessEnded.EXIT, 0), (ProcessEnded.KILLED, -9), (ProcessEnded.KILLED, None),
        (ProcessEnded.OUTLIVED, None)]
    assert all(s.recording.nvtx_unavailable == "synthetic: NVTX not routed" for s in got)


def _exec_d(s: SyntheticStream, run: Path, n: int) -> None:
    """Write `s` as the collector names the stream of a process's n-th exec'd program."""
    path = s.write(run.parent / f"exec{n}")
    path.rename(run / f"{path.stem}-e{n}.jsonl")


def test_streams_of_one_process_across_exec_are_its_programs_in_exec_order(tmp_path: Path
                                                                          ) -> None:
    # SYNTHETIC: pid 10 exec'd three times, each program initialising CUDA (the same pid and
    # start ticks: the collector adds -e<n>); the same wall clock, so the names order them.
    run = tmp_path / "run"
    run.mkdir()
    SyntheticStream(pid=10, wall_ns=100, argv=("p0",)).kernel("k", 1, 2).write(run)
    _exec_d(SyntheticStream(pid=10, wall_ns=100, argv=("p10",)).end(), run, 10)
    _exec_d(SyntheticStream(pid=10, wall_ns=100, argv=("p1",)).kernel("k", 1, 2), run, 1)
    _exec_d(SyntheticStream(pid=10, wall_ns=100, argv=("p2",)), run, 2)
    got = read_run(run, exit_codes={10: 3})
    assert [s.process.info.argv for s in got] == [("p0",), ("p1",), ("p2",), ("p10",)]
    assert [(s.process.info.pid, s.process.info.ended, s.process.info.exit_code)
            for s in got] == [(10, ProcessEnded.EXEC, None), (10, ProcessEnded.EXEC, None),
                              (10, ProcessEnded.EXEC, None), (10, ProcessEnded.EXIT, 3)]
    assert "exec'd" in (got[0].process.memory_reason or "")
    assert all(s.process.info.problems == () for s in got)


def test_read_run_of_an_empty_or_missing_folder(tmp_path: Path) -> None:
    assert read_run(tmp_path) == ()
    with pytest.raises(InputError, match="not a run folder"):
        read_run(tmp_path / "absent")


def test_snapshot_of_the_stream_equals_the_same_graph(tmp_path: Path) -> None:
    s = SyntheticStream().inst(1, 2, 3, at=5, snapshot=chain(["a", "b", "a"]))
    s.inst(4, 5, 6, at=7, snapshot=chain(["a", "b", "a"]))
    a, b = read_stream(s.kernel("k", 1, 2).end().write(tmp_path)).recording.instantiated
    assert a.snapshot is not None and b.snapshot is not None
    assert (a.snapshot.topology_hash, a.snapshot.shape_hash) == (b.snapshot.topology_hash,
                                                                 b.snapshot.shape_hash)
