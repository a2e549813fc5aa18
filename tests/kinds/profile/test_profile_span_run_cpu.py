"""graphcert.run.profile_span on the CPU: span mode's run with a fake cupti
(tests/_fakecupti.py) and a fake harness of synthetic held timings, so the GRAPH_TRACE records
a "replay" leaves are matched to the traced executable as on a GPU. Synthetic: nothing here
came from a GPU."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner

from graphcert.cli import cli
from graphcert.cupti.activity import GraphLaunchRecord
from graphcert.model import RawGraph, snapshot_from_raw
from graphcert.run import profile as run_profile
from graphcert.run import profile_span
from graphcert.run.harness import HeldSample, QueueUnavailable
from graphcert.run.profile_trace import ProfileSettings, ReadGraph
from tests import _fakecupti as fc
from tests._modelgraphs import kern, memset
from tests._profilecerts import synthetic_class
from tests.kinds.profile.test_profile_run_cpu import FakeStream, _read

SYNTHETIC_SPAN_NS = 4_000  # what each synthetic traced replay's record spans


class FakeHarness:
    """Held replays with synthetic timings: each held_samples() call takes the next list of
    (device ns, host ns) and launches once per sample, as the harness would; `unavailable`:
    the blocking kernel "times out" instead."""

    def __init__(self, timings: list[list[tuple[float, float]]],
                 unavailable: str | None = None) -> None:
        self.stream = FakeStream()
        self._timings = iter(timings)
        self._unavailable = unavailable

    def held_samples(self, enqueue: Callable[[Any], None], ops: int,
                     count: int) -> list[HeldSample]:
        if self._unavailable is not None:
            raise QueueUnavailable(self._unavailable)
        got = next(self._timings)
        assert len(got) == count
        out = []
        for device_ns, host_ns in got:
            enqueue(self.stream)
            out.append(HeldSample(device_ns * 1e-9, host_ns * 1e-9))
        return out


class FakeExec:
    """An executable that, launched while GRAPH_TRACE is on and instantiated inside that
    window, leaves one launch record with its CUPTI id (as DEVICE_FACTS.md says CUPTI does);
    and a record of another executable beside it, which the run must leave out."""

    def __init__(self, fake: fc.FakeCupti, handle: int, log: list[str]) -> None:
        self.handle, self._fake, self._log = handle, fake, log
        self._traced = int(fc.ActivityKind.GRAPH_TRACE) in fake.enabled
        self.launches = 0

    def launch(self, stream: Any) -> None:
        self.launches += 1
        self._log.append(f"launch {self.handle}")
        if self._traced and int(fc.ActivityKind.GRAPH_TRACE) in self._fake.enabled:
            t0 = self.launches * 100_000
            self._fake.pending += [
                fc.graph_launch(500 + self.handle, t0, t0 + SYNTHETIC_SPAN_NS + self.launches,
                                corr=self.launches),
                fc.graph_launch(999, t0, t0 + 1, corr=10_000 + self.launches)]

    def destroy(self) -> None:
        self._log.append(f"destroy {self.handle}")


class FakeGraph:
    """The read graph: each instantiate() makes a new FakeExec."""

    def __init__(self, fake: fc.FakeCupti) -> None:
        self.fake, self.made, self.log = fake, [], []  # type: ignore[var-annotated]

    def instantiate(self) -> FakeExec:
        exe = FakeExec(self.fake, len(self.made) + 1, self.log)
        self.made.append(exe)
        self.log.append(f"instantiate {exe.handle} traced={exe._traced}")
        return exe


def _span_read(fake: fc.FakeCupti) -> tuple[ReadGraph, FakeGraph]:
    read = _read(RawGraph((memset(0), kern(1, "k_a")), ((0, 1),)))
    source = FakeGraph(fake)
    return ReadGraph(read.snapshot, read.graph, source, {}), source  # type: ignore[arg-type]


UNTRACED = [(1000.0, 3000.0), (1100.0, 3100.0), (900.0, 2900.0)]  # (device ns, host ns)
TRACED = [(1010.0, 3500.0), (1120.0, 3600.0), (905.0, 3400.0)]


def test_span_class_times_untraced_then_traced_and_keeps_one_record_a_replay(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with fc.installed(monkeypatch) as fake:
        read, source = _span_read(fake)
        cls = profile_span.span_class(read, FakeHarness([UNTRACED, TRACED]),  # type: ignore[arg-type]
                                      ProfileSettings(3, span=True), label="c8", size=8,
                                      warmup=2)
        assert fake.enabled == []  # tracing off again
    assert cls.profile is None and cls.overhead is None and cls.span_mode
    s = cls.span
    assert s is not None and (s.replays, s.records, s.dropped) == (3, 3, 0)
    # the warmup's two launches left records too: only the held replays' (3, 4, 5) count
    assert s.median_ns == SYNTHETIC_SPAN_NS + 4
    assert (s.low_ns, s.high_ns) == (SYNTHETIC_SPAN_NS + 3, SYNTHETIC_SPAN_NS + 5)
    assert (s.untraced_ns, s.traced_ns) == pytest.approx((1000.0, 1010.0))
    assert s.distortion == pytest.approx(1.01)
    # E0 untraced, destroyed; E1 instantiated inside the GRAPH_TRACE window, destroyed
    assert source.log[0] == "instantiate 1 traced=False"
    assert "instantiate 2 traced=True" in source.log
    assert source.log.index("destroy 1") < source.log.index("instantiate 2 traced=True")
    assert source.log[-1] == "destroy 2"
    assert [e.launches for e in source.made] == [5, 5]


def test_fewer_records_than_replays_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    with fc.installed(monkeypatch) as fake:
        read, _ = _span_read(fake)
        original = FakeExec.launch

        def lossy(self: FakeExec, stream: Any) -> None:  # the last replay leaves no record
            original(self, stream)
            if self.launches == 5 and self._traced:
                fake.pending = [r for r in fake.pending if r.correlation_id != 5]

        monkeypatch.setattr(FakeExec, "launch", lossy)
        fake.dropped = 1
        cls = profile_span.span_class(read, FakeHarness([UNTRACED, TRACED]),  # type: ignore[arg-type]
                                      ProfileSettings(3, span=True), label="c8", size=8,
                                      warmup=2)
    assert cls.span is not None and (cls.span.records, cls.span.dropped) == (2, 1)


def test_no_record_at_all_is_a_class_without_a_span(monkeypatch: pytest.MonkeyPatch) -> None:
    """An executable instantiated before GRAPH_TRACE was on gives no record (DEVICE_FACTS.md):
    the class says so instead of making figures of nothing."""
    with fc.installed(monkeypatch) as fake:
        read, _ = _span_read(fake)
        monkeypatch.setattr(FakeExec, "launch", lambda self, stream: None)
        cls = profile_span.span_class(read, FakeHarness([UNTRACED, TRACED]),  # type: ignore[arg-type]
                                      ProfileSettings(3, span=True), label="c8", size=8,
                                      warmup=2)
    assert cls.span is None and cls.overhead_reason is not None
    assert "no GRAPH_TRACE record" in cls.overhead_reason


def test_a_blocker_timeout_leaves_the_class_without_a_span(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with fc.installed(monkeypatch) as fake:
        read, source = _span_read(fake)
        cls = profile_span.span_class(
            read, FakeHarness([], unavailable="synthetic: the blocking kernel timed out"),  # type: ignore[arg-type]
            ProfileSettings(3, span=True), label="c8", size=8, warmup=1)
    assert cls.span is None and cls.profile is None
    assert cls.overhead_reason is not None and "blocking kernel timed out" in cls.overhead_reason
    assert source.log[-1] == "destroy 1"


def test_replay_spans_match_the_executable_and_drop_the_warmup() -> None:
    rec = [GraphLaunchRecord(7, c, 100 * c, 100 * c + 10 + c) for c in range(1, 6)]
    other = GraphLaunchRecord(8, 99, 1, 2)
    assert profile_span.replay_spans([*rec, other], set(rec[:2]), 7, 3) == [13.0, 14.0, 15.0]
    assert profile_span.replay_spans([*rec, other], set(), None, 2) == [14.0, 15.0]
    assert profile_span.replay_spans(rec, set(), 7, 10) == [11.0, 12.0, 13.0, 14.0, 15.0]


def test_profile_class_dispatches_to_span_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    monkeypatch.setattr(profile_span, "span_class",
                        lambda read, harness, settings, **kw: seen.append("span") or "S")
    node_mode = synthetic_class()
    monkeypatch.setattr(run_profile, "trace",
                        lambda *a, **kw: seen.append("trace") or node_mode)
    monkeypatch.setattr(run_profile, "attribute",
                        lambda *a, **kw: seen.append("what-if") or (None, "synthetic: off"))
    args: Any = (None, lambda: None, None)
    assert run_profile.profile_class(args[0], args[1], args[2], ProfileSettings(2, span=True),
                                     label="c", size=1) == "S"
    per_node = run_profile.profile_class(args[0], args[1], args[2], ProfileSettings(2),
                                         label="c", size=1)
    assert per_node.profile is node_mode.profile and per_node.what_if_reason == "synthetic: off"
    assert seen == ["span", "trace", "what-if"]  # span mode runs neither trace nor what-if


def test_cli_span_flag_reaches_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    got: list[ProfileSettings] = []

    def fake_workloads(refs: Any, sizes: Any, settings: ProfileSettings, **kw: Any) -> list[Any]:
        got.append(settings)
        return []

    monkeypatch.setattr(run_profile, "profile_workloads", fake_workloads)
    done = CliRunner().invoke(cli, ["profile", "chain", "--size", "1", "--span",
                                    "--no-certificate"])
    assert done.exit_code == 0, done.output
    assert got == [ProfileSettings(200, True, span=True)]


def test_snapshot_helper_is_synthetic() -> None:
    """The graph read above is the model's own (no GPU): its snapshot has two nodes."""
    assert snapshot_from_raw(RawGraph((memset(0), kern(1, "k_a")), ((0, 1),))).node_count == 2
