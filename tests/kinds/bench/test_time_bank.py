"""The figures of one way of launching share their time (Harness._collect's bank): CPU
tests with a fake clock and synthetic samples (made up, not measured)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from graphcert.run import harness as harness_mod
from graphcert.run.harness import Harness
from graphcert.stats import StopRule


class FakeClock:
    """perf_counter standing still until a sample round moves it on."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def bare_harness(rule: StopRule) -> Harness:
    h = object.__new__(Harness)  # no GPU: only the sampling loop is exercised
    h.loop_rule = rule
    h._bank = None
    return h


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(harness_mod.time, "perf_counter", fake)
    return fake


def rounds(clock: FakeClock, values: Iterator[float], step: float
           ) -> Callable[[], list[float]]:
    """A sample round that takes `step` seconds and yields the next value."""
    def one_round() -> list[float]:
        clock.now += step
        return [next(values)]
    return one_round


RULE = StopRule(max_noise=0.005, min_samples=10, min_time_s=0.0, timeout_s=1.0)
STEADY = [1.0] * 10  # synthetic: meets any target at once
NOISY = [0.5, 1.5, 0.7, 1.3, 0.9, 1.1]  # synthetic: never within 0.5% in a few hundred samples


def test_without_a_bank_a_loop_stops_at_its_timeout(clock: FakeClock) -> None:
    h = bare_harness(RULE)
    got = h._collect(rounds(clock, itertools.cycle(NOISY), 0.01), host_clock=False)
    assert got.ended.value == "timeout" and clock.now == pytest.approx(1.0, abs=0.02)


def test_a_quick_loop_leaves_its_time_and_a_slow_one_uses_it_up_to_its_timeout_again(
        clock: FakeClock) -> None:
    h = bare_harness(RULE)
    h._bank = 0.0
    quick = h._collect(rounds(clock, itertools.cycle(STEADY), 0.01), host_clock=False)
    assert quick.ended.value == "precision_target"
    left = h._bank
    assert left == pytest.approx(1.0 - clock.now, abs=1e-9) and left > 0.8
    start = clock.now
    slow = h._collect(rounds(clock, itertools.cycle(NOISY), 0.01), host_clock=False)
    assert slow.ended.value == "timeout"
    spent = clock.now - start
    assert spent == pytest.approx(1.0 + left, abs=0.02)  # its own second and the bank's
    assert h._bank == pytest.approx(0.0, abs=0.02)


def test_the_bank_gives_at_most_one_more_timeout(clock: FakeClock) -> None:
    h = bare_harness(RULE)
    h._bank = 5.0
    start = clock.now
    h._collect(rounds(clock, itertools.cycle(NOISY), 0.01), host_clock=False)
    assert clock.now - start == pytest.approx(2.0, abs=0.02)
    assert h._bank == pytest.approx(4.0, abs=0.02)


def test_a_loop_that_meets_its_target_on_borrowed_time_returns_the_rest(
        clock: FakeClock) -> None:
    h = bare_harness(RULE)
    h._bank = 1.0
    # synthetic: noisy for the first second, then steady long enough to meet the target
    values = itertools.chain(itertools.islice(itertools.cycle(NOISY), 100),
                             itertools.repeat(1.0))
    got = h._collect(rounds(clock, values, 0.01), host_clock=False)
    assert got.ended.value == "precision_target"
    assert 1.0 < clock.now < 2.0 and h._bank == pytest.approx(2.0 - clock.now, abs=0.02)
