"""graphcert.run.profile_whatif on the CPU: a fake executable graph whose replay lasts the sum
of its enabled nodes' synthetic durations (a serial chain), timed by a fake harness, so the
pairs, the selection, the budget and the refusals run as on a GPU. Synthetic: nothing came
from a GPU."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from graphcert.cli import cli
from graphcert.errors import CudaError, InputError
from graphcert.model import snapshot_from_raw
from graphcert.run import profile as run_profile
from graphcert.run import profile_whatif
from graphcert.run.harness import HeldSample, QueueUnavailable
from graphcert.run.profile_trace import (
    UNTRACED_UNHELD,
    ProfileSettings,
    ReadGraph,
    instantiate_again,
)
from tests._modelgraphs import chain, kern
from tests._oneline import one_line
from tests._profilecerts import synthetic_class

SYNTHETIC_NS = {0: 1000.0, 1: 4000.0, 2: 2000.0, 3: 500.0}  # by canonical index
HANDLE = 0x7F00  # synthetic template node handles: HANDLE + index


class FakeStream:
    def synchronize(self) -> None:
        pass


class FakeExec:
    """A serial chain's exec: a launch lasts the enabled nodes' durations plus a fixed launch
    cost and a drift that grows every launch (which the pairs must cancel)."""

    def __init__(self, refuse: int | None = None) -> None:
        self.enabled = dict.fromkeys(SYNTHETIC_NS, True)
        self.calls: list[tuple[int, bool]] = []
        self.launches = 0
        self.last_ns = 0.0
        self.destroyed = False
        self._refuse = refuse

    def launch(self, stream: Any) -> None:
        self.launches += 1
        self.last_ns = 300.0 + 2.0 * self.launches + sum(
            d for i, d in SYNTHETIC_NS.items() if self.enabled[i])

    def set_node_enabled(self, node: int, enabled: bool) -> None:
        index = node - HANDLE
        if index == self._refuse and not enabled:
            raise CudaError("cuGraphNodeSetEnabled", 1, "CUDA_ERROR_INVALID_VALUE",
                            "synthetic refusal")
        self.calls.append((index, enabled))
        self.enabled[index] = enabled

    def destroy(self) -> None:
        self.destroyed = True


class FakeGraph:
    def __init__(self, exe: FakeExec | None) -> None:
        self.exe = exe

    def instantiate(self) -> FakeExec:
        if self.exe is None:
            raise CudaError("cuGraphInstantiate", 801, "CUDA_ERROR_NOT_SUPPORTED",
                            "synthetic: a graph with memory nodes instantiated twice")
        return self.exe


class FakeHarness:
    def __init__(self, exe: FakeExec, unavailable: bool = False) -> None:
        self.stream = FakeStream()
        self.exe = exe
        self.unavailable = unavailable

    def held_sample(self, enqueue: Callable[[Any], None], ops: int) -> HeldSample:
        if self.unavailable:
            raise QueueUnavailable("synthetic: the blocking kernel timed out")
        enqueue(self.stream)
        return HeldSample(self.exe.last_ns * 1e-9, 1e-6)


def _read(exe: FakeExec | None) -> ReadGraph:
    snapshot = snapshot_from_raw(chain(*(kern(i, f"k_{i}") for i in SYNTHETIC_NS)))
    return ReadGraph(snapshot, None, FakeGraph(exe),  # type: ignore[arg-type]
                     {HANDLE + i: i for i in SYNTHETIC_NS})


def _ticks(step: float) -> Iterator[float]:
    t = 0.0
    while True:
        yield t
        t += step


def test_a_serial_chain_attributes_each_node_its_time() -> None:
    exe = FakeExec()
    order = [1, 2, 0, 3]
    w = profile_whatif.what_if(_read(exe), FakeHarness(exe), exe,  # type: ignore[arg-type]
                               order, ProfileSettings(what_if_pairs=8), warmup=2)
    assert [n.index for n in w.nodes] == order and w.skipped == 0
    for n in w.nodes:  # the drift between the two halves of a pair is one launch: 2 ns
        assert n.contribution_ns == pytest.approx(SYNTHETIC_NS[n.index], abs=2.0)
        assert n.low_ns <= n.contribution_ns <= n.high_ns and n.pairs == 8
    assert w.baseline_low_ns <= w.baseline_ns <= w.baseline_high_ns
    assert w.selection == "all 4 kernel, memcpy and memset nodes"
    assert all(exe.enabled.values()) and exe.destroyed
    first = [on for i, on in exe.calls if i == 1][:4]
    assert first == [True, False, False, True]  # the order alternates from pair to pair


def test_top_k_and_the_budget_bound_the_nodes() -> None:
    exe = FakeExec()
    w = profile_whatif.what_if(_read(exe), FakeHarness(exe), exe,  # type: ignore[arg-type]
                               [1, 2, 0, 3], ProfileSettings(what_if=2, what_if_pairs=2))
    assert [n.index for n in w.nodes] == [1, 2] and w.skipped == 2
    assert w.selection.startswith("the 2 longest of 4")
    # a clock a second further on each read: the 2.5 s budget lets two nodes start
    ticks = _ticks(1.0)
    w = profile_whatif.what_if(_read(exe), FakeHarness(exe), exe,  # type: ignore[arg-type]
                               [1, 2, 0, 3], ProfileSettings(what_if_pairs=2,
                                                             what_if_budget_s=2.5),
                               clock=lambda: next(ticks))
    assert [n.index for n in w.nodes] == [1, 2] and w.skipped == 2
    assert "2 of them not reached within the 2.5 s budget (2 attributed)" in w.selection


@pytest.mark.parametrize(("exe", "unavailable", "said"), [
    (FakeExec(refuse=2), False, "the driver refused: cuGraphNodeSetEnabled"),
    (None, False, "would not instantiate a second executable of this graph"),
    (FakeExec(), True, "held replays unavailable"),
])
def test_what_cannot_run_is_a_reason(exe: FakeExec | None, unavailable: bool,
                                     said: str) -> None:
    harness = FakeHarness(exe or FakeExec(), unavailable)
    got, reason = profile_whatif.attribute(_read(exe), harness,  # type: ignore[arg-type]
                                           synthetic_class().profile,
                                           ProfileSettings(what_if_pairs=2))
    assert got is None and reason is not None and said in reason
    if exe is not None:
        assert exe.destroyed and all(exe.enabled.values())


def test_off_and_no_graph_are_reasons() -> None:
    exe = FakeExec()
    harness = FakeHarness(exe)
    profile = synthetic_class().profile
    assert profile_whatif.attribute(_read(exe), harness, profile,  # type: ignore[arg-type]
                                    ProfileSettings(what_if=0)) == (None, profile_whatif.OFF)
    no_source = dataclasses.replace(_read(exe), source=None)
    got, reason = profile_whatif.attribute(no_source, harness,  # type: ignore[arg-type]
                                           profile, ProfileSettings())
    assert got is None and reason is not None and "no CUDA graph" in reason
    assert exe.launches == 0


def test_profile_class_attaches_the_attribution(monkeypatch: pytest.MonkeyPatch) -> None:
    exe = FakeExec()
    cls = synthetic_class()  # its profile's nodes 0..3 are kernels, the longest 1 then 2
    monkeypatch.setattr(run_profile, "trace", lambda *a, **k: cls)
    got = run_profile.profile_class(_read(exe), lambda: None,
                                    FakeHarness(exe),  # type: ignore[arg-type]
                                    ProfileSettings(what_if=2, what_if_pairs=4),
                                    label=cls.label, size=cls.size)
    assert got.what_if is not None and got.what_if_reason is None
    assert [n.index for n in got.what_if.nodes] == [1, 2]
    assert got.what_if.skipped == 3  # 0, 3 and the memset 5 beyond the top 2


@pytest.mark.parametrize(("kwargs", "said"), [
    ({"what_if": -1}, "what_if=-1"), ({"what_if": True}, "what_if=True"),
    ({"what_if_pairs": 0}, "what_if_pairs=0"), ({"what_if_budget_s": 0.0}, "what_if_budget_s"),
    ({"what_if_budget_s": float("nan")}, "what_if_budget_s"),
])
def test_bad_settings_are_refused(kwargs: dict[str, Any], said: str) -> None:
    with pytest.raises(InputError, match=said):
        ProfileSettings(**kwargs)


@pytest.mark.parametrize(("args", "said"), [
    (["--what-if", "-1"], "--what-if"), (["--what-if-pairs", "0"], "--what-if-pairs"),
    (["--what-if-budget", "0"], "--what-if-budget"),
])
def test_cli_bad_what_if_is_one_line_exit_2(args: list[str], said: str) -> None:
    assert said in one_line(CliRunner().invoke(cli, ["profile", "chain", "--size", "8", *args]))


def test_no_what_if_where_even_untraced_launches_could_not_be_held(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The held replays what-if needs already timed the blocker out: it is not tried again
    (another blocker timeout a class), and the class says why."""
    exe = FakeExec()
    unheld = dataclasses.replace(synthetic_class(), overhead=None,
                                 overhead_reason=f"{UNTRACED_UNHELD}: synthetic timeout")
    monkeypatch.setattr(run_profile, "trace", lambda *a, **k: unheld)
    got = run_profile.profile_class(_read(exe), lambda: None,
                                    FakeHarness(exe),  # type: ignore[arg-type]
                                    ProfileSettings(), label=unheld.label, size=unheld.size)
    assert got.what_if is None and got.what_if_reason == unheld.overhead_reason
    assert exe.launches == 0


def test_a_graph_the_driver_will_not_instantiate_twice_names_its_kinds() -> None:
    """A WHILE node's graph (synthetic here) refused a second executable on a GPU: the
    reason names the node kinds and the driver's error, not the generic advice to upgrade."""
    from graphcert.model import NodeKind, RawGraph, RawNode

    body = RawGraph((kern(0, "k_body"),), ())
    cond = RawNode(1, NodeKind.CONDITIONAL, {"type": "while", "size": 1}, (body,))
    read = dataclasses.replace(_read(None), snapshot=snapshot_from_raw(
        RawGraph((kern(0, "k_0"), cond), ((0, 1),))))
    exe, why = instantiate_again(read)
    assert exe is None and why == ("the driver would not instantiate a second executable of "
                                   "this graph (it holds conditional nodes): "
                                   "cuGraphInstantiate gave CUDA_ERROR_NOT_SUPPORTED")
