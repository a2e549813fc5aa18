"""The held replays, tracing's cost and what-if as recorded on an H200 (reports/profile-*.json
and reports/.baseline/, recorded at b70d82a: see reports/README.md): each overhead is on the
device clock with its interval and the host's launch call apart, the notes name the nodes
tracing distorts, what-if's figures hold together and sit where a replay's arithmetic puts
them, and the PyTorch step's traced replays no longer read faster than untraced."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphcert.cert.store import load_certificate
from graphcert.kinds.profile.overhead import HELD, TOUCH_FACTOR
from graphcert.kinds.profile.result import ProfileResult

ROOT = Path(__file__).resolve().parents[3]
RECORDED = sorted([*(ROOT / "reports").glob("profile-*.json"),
                   *(ROOT / "reports" / ".baseline").glob("profile-*.json")])


def _result(path: Path) -> ProfileResult:
    result = load_certificate(path).result
    assert isinstance(result, ProfileResult)
    return result


def test_the_recorded_profiles_are_there() -> None:
    assert len(RECORDED) == 8, [p.name for p in RECORDED]


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_overheads_are_held_with_intervals_or_say_why_not(path: Path) -> None:
    result = _result(path)
    assert result.flush_l2 is True  # the default: L2 cleared before each replay, as bench
    for cls in result.classes:
        o = cls.overhead
        if o is None:  # converge: its WHILE graph's launch waits while CUPTI traces
            assert cls.overhead_reason and "could not be held" in cls.overhead_reason
            assert any("overhead not measured" in n for n in result.notes)
            continue
        assert o.method == HELD and o.samples == result.replays
        assert o.traced_interval and o.untraced_interval
        assert o.traced_interval[0] <= o.traced_ns <= o.traced_interval[1]
        assert o.untraced_interval[0] <= o.untraced_ns <= o.untraced_interval[1]
        assert o.host_traced_ns and o.host_untraced_ns  # the launch call, apart
        # kernel tracing costs the device: every recorded class reads slower traced
        assert not o.faster_traced() and o.ratio > 1
        extra = o.extra_ns_per_record
        assert extra is not None and extra > 0
        assert cls.profile is not None
        touched = o.touched(cls.profile)
        assert touched == tuple(n.index for n in cls.profile.nodes
                                if n.median_ns < TOUCH_FACTOR * extra)
        (note,) = [n for n in result.notes if n.startswith(f"{cls.label}: tracing stretched")]
        assert f"{len(touched)} of {len(cls.profile.nodes)} timed nodes" in note


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_what_if_figures_hold_together(path: Path) -> None:
    for cls in _result(path).classes:
        w = cls.what_if
        if w is None:  # converge's WHILE graph cannot be instantiated a second time
            assert cls.what_if_reason and "NOT_SUPPORTED" in cls.what_if_reason
            continue
        assert cls.profile is not None and cls.overhead is not None
        timed = {n.index: n for n in cls.profile.nodes}
        assert [n.index for n in w.nodes] and all(n.index in timed for n in w.nodes)
        assert w.skipped == len(timed) - len(w.nodes)
        # what-if's own executable, timed after tracing, reads the untraced replay again
        assert w.baseline_ns == pytest.approx(cls.overhead.untraced_ns, rel=0.1)
        for n in w.nodes:
            assert n.low_ns <= n.contribution_ns <= n.high_ns
            # a node cannot save more than the whole replay
            assert n.contribution_ns < w.baseline_ns


def test_a_serial_chain_saves_about_its_node_and_gap() -> None:
    """chain is serial: each attributed node saves about its own time plus its gap into it;
    the sum over its nodes about the replay (loosely: tracing stretches the node times)."""
    (cls,) = _result(ROOT / "reports" / "profile-chain-NVIDIA_H200.json").classes
    assert cls.what_if is not None and cls.profile is not None
    total = sum(n.contribution_ns for n in cls.what_if.nodes)
    assert 0.5 * cls.what_if.baseline_ns < total < 1.1 * cls.what_if.baseline_ns


def test_the_pytorch_step_reads_slower_traced_at_every_bucket() -> None:
    """The bucket that once read 0.776x (events around replays enqueued back to back) reads
    slower traced on the device clock, beyond its interval, like the others."""
    result = _result(ROOT / "reports" / "profile-torch_decode-NVIDIA_H200.json")
    for cls in result.classes:
        assert cls.overhead is not None and cls.overhead.ratio_interval is not None
        assert cls.overhead.ratio_interval[0] > 1, cls.label
