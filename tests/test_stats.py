"""Timing statistics: summaries, the stopping rule, speedup intervals, line fits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphcert.stats import StopRule, fit_line, relative_stddev, speedup_interval, summarize


def test_summarize() -> None:
    s = summarize([1.0, 2.0, 3.0, 4.0, 5.0])
    assert s["samples"] == 5 and s["median_s"] == 3.0 and s["mean_s"] == 3.0
    assert s["min_s"] == 1.0 and s["max_s"] == 5.0 and s["iqr_s"] == 2.0
    assert s["rel_stddev"] == pytest.approx(math.sqrt(2.5) / 3)
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
    assert iv["low"] <= iv["median"] <= iv["high"]
    assert 1.95 < iv["low"] and iv["high"] < 2.05


def test_fit_line_recovers_a_and_b() -> None:
    xs = [1, 2, 4, 8, 16, 1000]
    fit = fit_line(xs, [2e-6 + 0.5e-6 * x for x in xs])
    assert fit["a_s"] == pytest.approx(2e-6) and fit["b_s"] == pytest.approx(0.5e-6)
    assert fit["r2"] == pytest.approx(1.0)
