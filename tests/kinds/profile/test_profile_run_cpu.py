"""graphcert.run.profile on the CPU: the trace loop with a fake cupti (tests/_fakecupti.py)
and fake replay timings, so the records a "replay" leaves are joined and analysed as on a GPU;
and the bad input that is refused before any GPU work. Synthetic: nothing came from a GPU."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner

import graphcert
from graphcert.cli import cli
from graphcert.errors import InputError
from graphcert.model import NodeKind, RawGraph, RawNode, snapshot_from_raw
from graphcert.run import profile as run_profile
from graphcert.run import profile_trace
from graphcert.run.harness import HeldSample, QueueUnavailable
from tests import _fakecupti as fc
from tests._modelgraphs import fork, kern, memset
from tests._oneline import one_line

SYNTHETIC_DURATIONS = {0: 300, 1: 1000, 2: 2000, 3: 500, 4: 700, 5: 900}  # ns, by canonical index


class FakeStream:
    def synchronize(self) -> None:
        pass


class FakeHarness:
    """Held replays with synthetic timings: each held_sample() takes the next (device ns,
    host ns) and launches once, as the harness would; from call `fail_at` on (0-based) the
    blocking kernel "times out" (the launch still runs, as on a GPU)."""

    def __init__(self, timings: list[tuple[float, float]], fail_at: int | None = None) -> None:
        self.stream = FakeStream()
        self._timings = iter(timings)
        self._fail_at = fail_at
        self.calls = 0

    def held_sample(self, enqueue: Callable[[Any], None], ops: int) -> HeldSample:
        self.calls += 1
        enqueue(self.stream)
        if self._fail_at is not None and self.calls > self._fail_at:
            raise QueueUnavailable("the blocking kernel timed out")
        device_ns, host_ns = next(self._timings)
        return HeldSample(device_ns * 1e-9, host_ns * 1e-9)


def _read(raw: RawGraph) -> profile_trace.ReadGraph:
    snapshot = snapshot_from_raw(raw)
    ids = [(1 << 32) | (50 + i) for i in range(snapshot.node_count)]
    return profile_trace.ReadGraph(snapshot, graphcert.profiling.graph_of(snapshot, ids))


def _replayer(fake: fc.FakeCupti, read: profile_trace.ReadGraph,
              gap: int = 100) -> Callable[[], None]:
    """A launch that, while tracing is on, leaves one record per timed node scheduled as soon
    as its predecessors end (+gap), as a replay on the device would."""
    graph = read.graph
    preds = graph.predecessors()
    launches = [0]

    def launch() -> None:
        launches[0] += 1
        if not fake.enabled:
            return
        corr, t0 = 1000 + launches[0], launches[0] * 1_000_000
        times: dict[int, tuple[int, int]] = {}
        for v in graph.topological():
            node = graph.nodes[v]
            ready = max((times[p][1] + gap for p in preds[v]), default=t0)
            dur = SYNTHETIC_DURATIONS.get(v, 100) if node.timed else 0
            times[v] = (ready, ready + dur)
            if node.timed:
                rec = {NodeKind.KERNEL: fc.kernel, NodeKind.MEMSET: fc.memset}[node.kind]
                args: list[Any] = [node.name or "k"] if node.kind is NodeKind.KERNEL else []
                fake.pending.append(rec(*args, ready, ready + dur,
                                        node=(9 << 32) | node.node_id, corr=corr))

    return launch


def test_trace_joins_analyses_and_measures_overhead(monkeypatch: pytest.MonkeyPatch) -> None:
    with fc.installed(monkeypatch) as fake:
        harness = FakeHarness([(1000.0, 3000.0), (1100.0, 3100.0), (900.0, 2900.0),  # untraced
                               (1010.0, 9000.0), (1200.0, 9100.0), (950.0, 8900.0)])  # traced
        read = _read(fork())
        fake.pending.append(fc.kernel("eager", 1, 2, graph_id=0, node=0))  # not of the graph
        replay = _replayer(fake, read)
        kernel = next(n for n in read.graph.nodes if n.kind is NodeKind.KERNEL)

        def with_body() -> None:  # a child graph's kernels, with a top-level node's low bits
            replay()
            if fake.enabled:
                fake.pending += [fc.kernel("body", 5, 6, node=(11 << 32) | kernel.node_id,
                                           corr=77) for _ in range(3)]

        cls = profile_trace.trace(read, with_body, harness,  # type: ignore[arg-type]
                                  profile_trace.ProfileSettings(3), label="c8", size=8,
                                  warmup=2)
    p = cls.profile
    assert (cls.label, cls.size, cls.topology_hash) == ("c8", 8, read.snapshot.topology_hash)
    assert p.replays == 3 and p.dropped == 0 and p.incomplete_replays == 0
    assert p.unmatched == 9 and p.duplicates == 0  # the body's records joined nothing
    timed = [n.index for n in read.snapshot.nodes if n.kind is not NodeKind.GRAPH]
    assert [n.index for n in p.nodes] == timed
    assert [u.kind for u in p.untimed] == [NodeKind.GRAPH]
    assert p.critical_path_ns <= p.sum_ns
    o = cls.overhead
    assert o is not None and o.method == "held"
    assert (o.untraced_ns, o.traced_ns) == pytest.approx((1000.0, 1010.0))
    assert (o.host_untraced_ns, o.host_traced_ns) == pytest.approx((3000.0, 9000.0))
    assert o.samples == 3
    assert o.untraced_interval == pytest.approx((900.0, 1100.0))  # 3 samples: min and max
    # every record of the graph's launches counts (the body's too): the extra per record
    assert o.records_per_replay == len(timed) + 3
    assert o.extra_ns_per_record == pytest.approx(10.0 / (len(timed) + 3))


@pytest.mark.parametrize(("fail_at", "said"), [(0, "untraced replays could not be held"),
                                              (16, "with CUPTI tracing on")])
def test_trace_without_held_launches_times_back_to_back(monkeypatch: pytest.MonkeyPatch,
                                                        fail_at: int, said: str) -> None:
    """A launch that waits on the device holds the blocker to its timeout (seen with CUPTI
    tracing a graph with a WHILE node): the profile is still made, every asked replay traced
    once (the one that timed out included), and the overhead is None with the reason."""
    with fc.installed(monkeypatch) as fake:
        read = _read(RawGraph((memset(0), kern(1, "k_a")), ((0, 1),)))
        replay = _replayer(fake, read)
        back_to_back: list[int] = []

        def timed(launch: Callable[[], None], stream: object, count: int) -> list[float]:
            back_to_back.append(count)
            return [launch() or 1.0 for _ in range(count)]

        monkeypatch.setattr(profile_trace, "time_replays", timed)
        harness = FakeHarness([(1.0, 1.0)] * 20, fail_at=fail_at)
        cls = profile_trace.trace(read, replay, harness,  # type: ignore[arg-type]
                                  profile_trace.ProfileSettings(10), label="c1", size=1,
                                  warmup=0)
    assert cls.overhead is None and cls.overhead_reason is not None
    assert cls.overhead_reason.startswith(said) and "timed out" in cls.overhead_reason
    assert cls.profile.replays == 10 and cls.profile.incomplete_replays == 0
    # untraced failing: all 10 traced back to back; traced failing after 6 held and the one
    # that timed out: the other 3
    assert back_to_back == ([10] if fail_at == 0 else [3])


def test_trace_reports_dropped_records(monkeypatch: pytest.MonkeyPatch) -> None:
    with fc.installed(monkeypatch) as fake:
        read = _read(RawGraph((memset(0), kern(1, "k_a")), ((0, 1),)))
        replay = _replayer(fake, read)

        def dropping() -> None:
            replay()
            fake.dropped += 2 if fake.enabled else 0

        harness = FakeHarness([(1.0, 1.0)] * 8)
        cls = profile_trace.trace(read, dropping, harness,  # type: ignore[arg-type]
                                  profile_trace.ProfileSettings(4), label="c1", size=1,
                                  warmup=0)
    assert cls.profile.dropped == 8 and cls.profile.replays == 4


def test_graph_with_no_timed_node_is_refused() -> None:
    snapshot = snapshot_from_raw(RawGraph((RawNode(0, NodeKind.HOST, {}),), ()))
    with pytest.raises(InputError, match="no timed node") as info:
        graphcert.profiling.graph_of(snapshot, [1])
    assert "\n" not in info.value.one_line() and info.value.exit_code == 2


@pytest.mark.parametrize("replays", [0, -1, True, 2.5, 100_001])
def test_bad_replays_refused(replays: object) -> None:
    with pytest.raises(InputError, match="replays"):
        profile_trace.check_replays(replays)


def test_api_refuses_before_gpu_work() -> None:
    with pytest.raises(InputError, match="replays"):
        graphcert.profile(object(), replay=lambda: None, replays=0)
    with pytest.raises(InputError, match="replay must be callable"):
        graphcert.profile(object(), replay=None)
    with pytest.raises(InputError, match="stream"):
        run_profile._stream_address("not a stream")
    assert run_profile._stream_address(None) == 0


@pytest.mark.parametrize(("args", "said"), [
    (["profile", "chain", "--replays", "0"], "--replays"),
    (["profile", "chain", "--size", "8", "--classes", "1,2"], "--size or --classes"),
    (["profile", "no_such_workload", "--size", "8"], "no_such_workload"),
    (["profile", "chain", "--span", "--what-if", "3"], "--what-if does not apply with --span"),
    (["profile", "chain", "--span", "--what-if-pairs", "3", "--what-if-budget", "1"],
     "--what-if-pairs, --what-if-budget do not apply with --span"),
])
def test_cli_bad_input_is_one_line_exit_2(args: list[str], said: str) -> None:
    assert said in one_line(CliRunner().invoke(cli, args))


def test_cli_without_cupti_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "cupti", None)
    monkeypatch.setitem(__import__("sys").modules, "cupti.cupti", None)  # whatever ran before
    line = one_line(CliRunner().invoke(cli, ["profile", "chain", "--size", "8",
                                             "--no-certificate"]))
    assert "CUPTI is not installed" in line and "pip install" in line


def test_instance_of_prefers_the_top_level_graph() -> None:
    """Low 32 bits number nodes within their own graph, so a WHILE body's kernels (instance 3,
    three runs per replay) carry the top level's low bits (instance 2, once per replay)."""
    from graphcert.profiling import ActivityRecord

    g = graphcert.profiling.graph_of(snapshot_from_raw(RawGraph(
        (kern(0, "k_a"), kern(1, "k_b")), ((0, 1),))), [0, 1])

    def rec(instance: int, node: int, corr: int) -> ActivityRecord:
        return ActivityRecord((instance << 32) | node, 0, 1, NodeKind.KERNEL, "k", corr)

    top = [rec(2, n, c) for c in range(4) for n in (0, 1)]
    body = [rec(3, n, c) for c in range(4) for n in (0, 1) for _ in range(3)]
    assert profile_trace.instance_of(body + top, g) == 2
    assert profile_trace.instance_of([rec(3, 0, 1)] + top, g) == 2  # covers fewer nodes
    assert profile_trace.instance_of([], g) is None
    joined = graphcert.profiling.join(body + top, g, graph_instance=2)
    assert joined.duplicates == 0 and len(joined.unmatched) == len(body)


def test_a_step_profiles_its_buckets_and_a_workload_its_default_size() -> None:
    """Without --size or --classes: a framework step at graphcert.verify_step's buckets, a
    workload at 65,536 (as bench)."""
    from graphcert.buckets import parse_buckets
    from graphcert.frameworks.step import Step
    from graphcert.workloads.loaded import LoadedWorkload
    from graphcert.workloads.registry import load

    # Nothing runs: a declared step is enough to choose its sizes.
    declared = Step(fn=lambda x: x, make_inputs=lambda n: (n,))
    step = run_profile.default_sizes(LoadedWorkload("mystep.py:STEP", "a file", declared))
    assert list(step) == list(parse_buckets("vllm:64")) and len(step) > 1
    assert list(run_profile.default_sizes(load("chain"))) == [65536]
