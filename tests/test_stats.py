"""Timing statistics: summaries, the stopping rule, speedup intervals, line fits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphcert.cert.results import Ended, Interval, LineFit, Timing
from graphcert.stats import StopRule, fit_line, relative_stddev, speedup_interval, summarize


def test_summarize() -> None:
    s = summarize([1.0, 2.0, 3.0, 4.0, 5.0])
    assert s.samples == 5 and s.median_s == 3.0 and s.mean_s == 3.0
    assert s.min_s == 1.0 and s.max_s == 5.0 and s.iqr_s == 2.0
    assert s.rel_stddev == pytest.approx(math.sqrt(2.5) / 3)
    with pytest.raises(ValueError):
        summarize([])


def test_stop_rule_needs_samples_time_and_low_noise() -> None:
    rule = StopRule(max_noise=0.01, min_samples=10, min_time_s=0.5, timeout_s=5)
    quiet = [1.0] * 10
    assert not rule.done(quiet[:9], 1.0)
    assert not rule.done(quiet, 0.1)
    assert rule.done(quiet, 0.6)
    noisy = [1.0, 2.0] * 10
    assert not rule.done(noisy, 1.0)
    assert rule.done(noisy, 5.0)  # the timeout ends it


def test_relative_stddev_single_sample_is_infinite() -> None:
    assert relative_stddev([1.0]) == math.inf


def test_speedup_interval_brackets_the_ratio() -> None:
    rng = np.random.default_rng(0)
    stream = 10 + rng.normal(0, 0.1, 200)
    graph = 5 + rng.normal(0, 0.05, 200)
    iv = speedup_interval(stream, graph)
    assert iv.low <= iv.median <= iv.high
    assert 1.95 < iv.low and iv.high < 2.05


def test_fit_line_recovers_a_and_b() -> None:
    xs = [1, 2, 4, 8, 16, 1000]
    fit = fit_line(xs, [2e-6 + 0.5e-6 * x for x in xs])
    assert fit.a_s == pytest.approx(2e-6) and fit.b_s == pytest.approx(0.5e-6)
    assert fit.r2 == pytest.approx(1.0)


def _quantised(rng: np.random.Generator, mean: float, spread: float, size: int,
               quantum: float = 0.5e-6) -> np.ndarray:
    """Synthetic event timings: normal around `mean`, rounded to the timer's quantum."""
    return np.round((mean + rng.normal(0, spread, size)) / quantum) * quantum


def test_quantised_samples_no_longer_collapse_to_a_point() -> None:
    """Synthetic: every stream sample reads 25.0 us and every graph sample 16.0 us after
    quantisation (as chain's device figures did); the old bootstrap of medians gave
    [1.5625, 1.5625]."""
    rng = np.random.default_rng(1)
    stream = _quantised(rng, 25.0e-6, 0.05e-6, 300)
    graph = _quantised(rng, 16.0e-6, 0.05e-6, 300)
    assert len(set(stream)) == 1 and len(set(graph)) == 1  # fully quantised
    iv = speedup_interval(stream, graph, quantum_s=0.5e-6)
    assert iv.median == pytest.approx(1.5625)
    assert iv.low < 1.5625 < iv.high
    # one quantum on either side: (25 - 0.5) / (16 + 0.5) .. (25 + 0.5) / (16 - 0.5)
    assert iv.low == pytest.approx(24.5 / 16.5) and iv.high == pytest.approx(25.5 / 15.5)


def test_interval_reflects_spread_between_batches() -> None:
    """Synthetic, quantised: a drifting stream path (as between buffer placements) gives a
    wider interval than a steady one with the same median."""
    rng = np.random.default_rng(2)
    graph = _quantised(rng, 16e-6, 0.3e-6, 400)
    steady = _quantised(rng, 25e-6, 0.3e-6, 400)
    drifting = _quantised(rng, 25e-6, 0.3e-6, 400) + np.repeat([-2e-6, 2e-6], 200)
    a = speedup_interval(steady, graph, quantum_s=0.5e-6)
    b = speedup_interval(drifting, graph, quantum_s=0.5e-6)
    assert (b.high - b.low) > 1.5 * (a.high - a.low)
    for iv in (a, b):
        assert iv.low <= iv.median <= iv.high


def test_interval_with_no_quantum_matches_spread_only() -> None:
    rng = np.random.default_rng(3)
    stream, graph = 10 + rng.normal(0, 0.1, 200), 5 + rng.normal(0, 0.05, 200)
    iv = speedup_interval(stream, graph, quantum_s=0.0)
    assert 1.97 < iv.low <= iv.median <= iv.high < 2.03
    with pytest.raises(ValueError):
        speedup_interval(stream, graph, quantum_s=float("nan"))


def test_a_graph_time_below_the_quantum_stays_finite() -> None:
    iv = speedup_interval([2e-6] * 20, [0.5e-6] * 20, quantum_s=0.5e-6)
    assert math.isfinite(iv.high) and iv.low < iv.median < iv.high


def test_figures_are_the_typed_values_a_result_holds() -> None:
    """summarize, speedup_interval and fit_line give Timing, Interval and LineFit (no dict to
    splat), and those serialise with the keys and numbers the certificates always held."""
    samples = [3.0e-6, 1.0e-6, 2.0e-6, 5.0e-6, 4.0e-6]
    timing = summarize(samples, Ended.TIMEOUT)
    assert isinstance(timing, Timing) and timing.ended is Ended.TIMEOUT
    rsd = float(np.std(samples, ddof=1)) / float(np.mean(samples))
    assert timing.to_json() == {
        "samples": 5, "median_s": 3.0e-6, "mean_s": float(np.mean(samples)), "min_s": 1.0e-6,
        "max_s": 5.0e-6, "rel_stddev": rsd, "iqr_s": float(np.percentile(samples, 75)
                                                          - np.percentile(samples, 25)),
        "noise": rsd, "ended": "timeout"}
    assert "ended" not in summarize(samples).to_json()  # as pooled figures were written
    interval = speedup_interval([2.0] * 20, [1.0] * 20)
    assert isinstance(interval, Interval)
    assert interval.to_json() == {"median": 2.0, "low": 2.0, "high": 2.0, "confidence": 0.95}
    line = fit_line([1, 2, 3], [3.0, 5.0, 7.0])
    assert isinstance(line, LineFit)
    assert line.to_json() == pytest.approx({"a_s": 1.0, "b_s": 2.0, "r2": 1.0})
