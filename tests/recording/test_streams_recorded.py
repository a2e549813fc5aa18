"""The stream reader and the merge of processes over streams the injection collector wrote on
a GPU (tests/fixtures/streams/, see its README): each process's counts are the ones the
program printed itself (`truth.jsonl`), the killed worker is marked, the fork's two workers on
two GPUs made the same topologies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphcert.recording.processes import ProcessEnded, merge
from graphcert.recording.regions import OUTSIDE
from graphcert.recording.streams import ProcessStream, read_run

STREAMS = Path(__file__).resolve().parents[1] / "fixtures" / "streams"


def _truth(name: str) -> dict[int, dict[str, Any]]:
    lines = (STREAMS / name / "truth.jsonl").read_text().splitlines()
    return {t["pid"]: t for t in map(json.loads, lines)}


def _by_pid(name: str) -> dict[int, ProcessStream]:
    return {s.process.info.pid or 0: s for s in read_run(STREAMS / name)}


def _launches(stream: ProcessStream) -> int:
    return sum(g.launches for g in stream.process.recorded.graphs)


@pytest.mark.parametrize("name", ["engine_fallback", "native_fork", "native_killed"])
def test_every_serving_process_counts_what_it_printed(name: str) -> None:
    streams, truth = _by_pid(name), _truth(name)
    for pid, t in truth.items():
        s = streams[pid]
        assert len(s.process.recorded.graphs) == t["graphs"], (name, pid)
        assert _launches(s) == t["graph_launches"], (name, pid)
        assert all(g.topology_hash for g in s.process.recorded.graphs)  # every graph read
        assert s.process.info.problems == ()
        assert s.process.info.gpus[0].ordinal == t["device"]
        if "eager_steady" in t:  # the native example counts its own eager launches
            steady = s.process.recorded.steady
            assert steady is not None and steady.eager_kernels == t["eager_steady"]
            regions = s.process.recorded.regions
            assert regions is not None
            found = {g.region: g.count for g in regions.groups}
            assert found == {r: n for r, n in t["eager_by_range"].items() if n}, (pid, found)


def test_the_engine_childs_fallback_is_named_by_its_range() -> None:
    (child,) = read_run(STREAMS / "engine_fallback")
    regions = child.process.recorded.regions
    assert regions is not None and regions.unavailable is None
    top = regions.groups[0]
    assert top.region == "eager b16" and OUTSIDE not in {g.region for g in regions.groups}
    steady = child.process.recorded.steady
    assert steady is not None and top.count == steady.eager_kernels > 0
    # each eager step of the fallback bucket runs the model's kernels one by one
    assert steady.eager_kernels % _truth("engine_fallback")[child.process.info.pid or 0][
        "eager_steps"] == 0


def test_forked_workers_on_two_gpus_made_the_same_topologies_and_ended_with_exit_now() -> None:
    a, b = read_run(STREAMS / "native_fork")
    assert {a.process.info.ended, b.process.info.ended} == {ProcessEnded.EXIT_NOW}
    assert {a.process.info.exit_code, b.process.info.exit_code} == {0}
    assert a.process.info.gpus[0].uuid != b.process.info.gpus[0].uuid
    topologies = [{g.topology_hash for g in s.process.recorded.graphs} for s in (a, b)]
    assert topologies[0] == topologies[1]
    whole = merge([a.process, b.process])
    assert whole.overall.graph_kernels == (a.process.recorded.overall.graph_kernels
                                           + b.process.recorded.overall.graph_kernels)
    assert {g.pid for g in whole.graphs} == {a.process.info.pid, b.process.info.pid}
    assert whole.churn == ()  # the same topology in two processes is not churn


def test_the_killed_worker_is_marked_and_the_other_kept() -> None:
    streams, truth = _by_pid("native_killed"), _truth("native_killed")
    (survivor,) = truth
    killed = [s for pid, s in streams.items() if pid != survivor]
    assert [s.process.info.ended for s in killed] == [ProcessEnded.KILLED]
    assert streams[survivor].process.info.ended is ProcessEnded.EXIT_NOW
    # what it flushed before the kill at its step 1500 is kept: every graph and some launches
    (gone,) = killed
    assert len(gone.process.recorded.graphs) == 7
    assert 0 < _launches(gone) < 1500
    assert gone.process.info.exit_code is None  # nobody waited for it
