"""bench_size's placement loop on CPU, with the GPU parts replaced by fakes: the workload is
set up again behind a pad of a different size at each placement, every figure is the median
over placements, the hot figure is kept apart. All timings are synthetic."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from graphcert.cert.results.figures import Ended, Timing, Unavailable
from graphcert.cert.results.measure import PlacementContexts
from graphcert.kinds.bench.result import Upfront
from graphcert.placements import Sampled, pad_bytes
from graphcert.run import bench as bench_mod
from graphcert.run.harness import BenchSettings
from graphcert.stats import StopRule

# synthetic per-placement device medians (seconds) for the stream path; graph steady
STREAM_DEVICE = [10e-6, 12e-6, 11e-6, 10.5e-6]
# synthetic per-placement host medians of the bare loop of 4 launches (seconds per sample)
BARE_HOST = [8e-6, 9e-6, 12e-6, 10e-6]


@dataclass
class FakeSession:
    events: list[str] = field(default_factory=list)

    def release(self) -> None:
        self.events.append("release")

    def prepare(self, capacity: int) -> None:
        self.events.append(f"prepare {capacity}")

    def build(self, stream: Any, n: int) -> Any:
        self.events.append("build")
        return FakeBuilt(self.events)

    def run_eager(self, stream: Any, n: int) -> None:
        pass


@dataclass
class FakeBuilt:
    events: list[str]
    graph: Any = None
    exe: Any = None

    def __post_init__(self) -> None:
        self.graph = type("G", (), {"handle": None})()
        self.exe = type("E", (), {"launch": staticmethod(lambda s: None)})()

    def destroy(self) -> None:
        self.events.append("destroy")


class FakeHarness:
    def __init__(self, settings: BenchSettings, events: list[str] | None = None,
                 refusal: str | None = None):
        self.settings = settings
        self.stream = type("S", (), {"synchronize": lambda self: None})()
        self.placement = -1
        self.empty_kernel = "empty"
        self.events = events if events is not None else []
        self.refusal = refusal  # what renew_context answers (None: renewed)
        self.shares: list[int] = []  # what bench_size told it each figure is made of
        self.known: list[dict[str, Any]] = []  # what each stream measurement was told
        self.stream_waits_on_host = False

    def share_loops(self, loops: int) -> None:
        self.shares.append(loops)

    def renew_context(self) -> str | None:
        self.events.append("renew")
        return self.refusal

    def clock_mhz(self) -> float:
        return 1500.0

    def hot_batch(self, weight: int) -> int:
        return 128 // weight

    def measure_samples(self, enqueue: Any, ops: int, weight: int | None = None,
                        bare: Any = None, known: Any = None) -> dict[str, Any]:
        graph = ops == 1
        if not graph:
            self.placement += 1
        dev = 5e-6 if graph else STREAM_DEVICE[self.placement]
        one = lambda v: Sampled([v * 0.99, v, v * 1.01], Ended.NOISE_TARGET)  # noqa: E731
        out = {"host_enqueue": one(dev / 3), "end_to_end": one(dev * 2), "device": one(dev),
               "hot_device": one(dev * 0.8)}
        if not graph:
            self.known.append(dict(known or {}))
            if self.stream_waits_on_host:  # the blocking kernel timed out (harness.py)
                out["device"] = (known or {}).get("device") or Unavailable(
                    f"held to its timeout at placement {self.placement}")
        if bare is not None:
            assert bare == ("bare", "empty", ops)  # as many launches as the stream path
            out["bare_host"] = one(BARE_HOST[self.placement])
        return out


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    pads: list[int] = []

    class Pad:
        def __init__(self, nbytes: int):
            pads.append(nbytes)

        def free(self) -> None:
            pads.append(-1)

    class Recording(list):  # type: ignore[type-arg]
        def __enter__(self) -> list[Any]:
            self.extend([lambda s: None] * 4)
            return self

        def __exit__(self, *exc: object) -> None:
            pass

    monkeypatch.setattr(bench_mod, "DeviceBuffer", Pad)
    monkeypatch.setattr(bench_mod, "graph_size", lambda handle: (4, 3))
    monkeypatch.setattr(bench_mod, "bare_launches", lambda kernel, count: ("bare", kernel, count))
    monkeypatch.setattr(bench_mod.oplog, "recording", lambda: Recording())
    monkeypatch.setattr(bench_mod, "_upfront", lambda session, h, n: (
        session.build(h.stream, n), Upfront(1e-3, 1e-3, 1e-3)))
    return pads


def test_placements_set_up_again_and_report_the_median(fakes: list[int]) -> None:
    session = FakeSession()
    h = FakeHarness(BenchSettings(StopRule(), placements=4))
    row = bench_mod.bench_size(session, h, 100)  # type: ignore[arg-type]
    assert session.events.count("prepare 128") == 4 and session.events.count("build") == 4
    assert session.events.count("destroy") == 4
    # a pad of a new size before each set-up after the first, freed after its measurement
    assert fakes == [pad_bytes(1), -1, pad_bytes(2), -1, pad_bytes(3), -1]
    device = row.stream.device
    assert isinstance(device, Timing)
    assert device.median_s == pytest.approx(10.75e-6)  # median of the four placements
    assert row.placements is not None
    assert row.placements["stream"]["device"].medians_s == pytest.approx(tuple(STREAM_DEVICE))
    assert row.placements["stream"]["device"].rel_range == pytest.approx(2e-6 / 10.75e-6)
    assert row.placements["graph"]["device"].rel_range == pytest.approx(0.0)
    # batches sized by queued work: 4 stream ops, a graph of 4 nodes (graph_size's fake)
    assert row.hot is not None and row.hot.batch == {"stream": 32, "graph": 32}
    # the bare loop: median over placements of its per-sample medians, per launch (4 ops)
    assert row.bare_host_per_op_s == pytest.approx(9.5e-6 / 4)
    assert row.stream_host_per_op_s == pytest.approx(10.75e-6 / 3 / 4)
    hot = row.hot.get("graph")
    assert hot is not None and hot.median_s == pytest.approx(4e-6)
    assert row.stream_path == "prepacked" and row.stream_ops == 4
    sp = row.speedup["device"]
    assert sp is not None and sp.median == pytest.approx(10.75e-6 / 5e-6, rel=0.02)


def test_one_placement_allocates_no_pad(fakes: list[int]) -> None:
    session = FakeSession()
    row = bench_mod.bench_size(session, FakeHarness(BenchSettings()), 8,  # type: ignore[arg-type]
                               placements=1)
    assert fakes == [] and session.events.count("build") == 1
    assert row.placements is not None
    assert row.placements["stream"]["device"].medians_s == (10e-6,)


def test_each_placement_after_the_first_runs_in_a_new_context(fakes: list[int]) -> None:
    session = FakeSession()
    h = FakeHarness(BenchSettings(StopRule(), placements=3), session.events)
    row = bench_mod.bench_size(session, h, 100)  # type: ignore[arg-type]
    assert row.contexts == PlacementContexts(3)
    # the workload's buffers and graph are given back before the context is renewed
    assert session.events == ["release", "prepare 128", "build", "destroy",
                              "release", "renew", "prepare 128", "build", "destroy",
                              "release", "renew", "prepare 128", "build", "destroy"]


def test_a_refused_renewal_keeps_one_context_and_says_why(fakes: list[int]) -> None:
    session = FakeSession()
    why = "synthetic: a framework holds the primary context"
    h = FakeHarness(BenchSettings(StopRule(), placements=4), session.events, refusal=why)
    row = bench_mod.bench_size(session, h, 100)  # type: ignore[arg-type]
    assert row.contexts == PlacementContexts(1, why)
    assert session.events.count("renew") == 1  # not asked again once refused
    assert session.events.count("build") == 4  # the placements are still measured


def test_same_context_placements_never_renew(fakes: list[int]) -> None:
    session = FakeSession()
    h = FakeHarness(BenchSettings(StopRule(), placements=3, new_contexts=False),
                    session.events)
    row = bench_mod.bench_size(session, h, 100)  # type: ignore[arg-type]
    assert "renew" not in session.events and row.contexts == PlacementContexts(1)


def test_a_figure_unavailable_at_one_placement_is_not_held_again(fakes: list[int]) -> None:
    """A stream path that waits on the host holds the blocking kernel to its timeout: once
    found at the first placement, later placements are told (no second timeout) and the
    pooled figure is unavailable with the first reason."""
    session = FakeSession()
    h = FakeHarness(BenchSettings(StopRule(), placements=3), session.events)
    h.stream_waits_on_host = True
    row = bench_mod.bench_size(session, h, 1000)  # type: ignore[arg-type]
    first = Unavailable("held to its timeout at placement 0")
    assert h.known == [{}, {"device": first}, {"device": first}]
    assert row.stream.device == first and row.speedup["device"] is None
