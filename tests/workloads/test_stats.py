"""Timing statistics: summaries, the stopping rule, speedup intervals, line fits."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from _thorough import examples

from graphcert.cert.results.figures import Ended, Interval, LineFit, Timing
from graphcert.stats import (
    Stopper,
    StopRule,
    fit_line,
    median_half_width,
    median_interval,
    relative_stddev,
    speedup_interval,
    summarize,
)


def test_summarize() -> None:
    s = summarize([1.0, 2.0, 3.0, 4.0, 5.0])
    assert s.samples == 5 and s.median_s == 3.0 and s.mean_s == 3.0
    assert s.min_s == 1.0 and s.max_s == 5.0 and s.iqr_s == 2.0
    assert s.rel_stddev == pytest.approx(math.sqrt(2.5) / 3)
    with pytest.raises(ValueError):
        summarize([])


def test_noise_rule_needs_samples_time_and_low_noise() -> None:
    rule = StopRule(max_noise=0.01, min_samples=10, min_time_s=0.5, timeout_s=5,
                    stopping="noise")
    quiet = [1.0] * 10
    assert not rule.done(quiet[:9], 1.0)
    assert not rule.done(quiet, 0.1)
    assert rule.done(quiet, 0.6)
    noisy = [1.0, 2.0] * 10
    assert not rule.done(noisy, 1.0)
    assert rule.done(noisy, 5.0)  # the timeout ends it


def test_precision_rule_stops_noisy_samples_that_the_noise_rule_never_would() -> None:
    """Synthetic host-like samples, 30% relative stddev: their spread never falls, but the
    median's interval narrows as they grow, so the precision rule stops and the noise rule
    runs to its timeout."""
    rng = np.random.default_rng(4)
    samples = list(80e-6 * (1 + 0.3 * np.abs(rng.standard_normal(20_000))))
    precision = StopRule(max_noise=0.005, min_time_s=0.0, timeout_s=10.0)
    noise = replace(precision, stopping="noise")
    assert precision.ended(samples[:50], 1.0, host_clock=False) is None
    assert precision.ended(samples, 1.0, host_clock=False) == "precision_target"
    assert noise.ended(samples, 1.0) is None and noise.ended(samples, 10.0) == "timeout"
    # host-clock figures have their own target: 2% is met with far fewer samples
    assert precision.ended(samples[:2000], 1.0, host_clock=True) == "precision_target"
    assert precision.ended(samples[:2000], 1.0, host_clock=False) is None


def test_a_figure_shares_its_times_between_its_placements() -> None:
    rule = StopRule(min_time_s=0.4, timeout_s=2.0).shared(8)
    assert rule.min_time_s == pytest.approx(0.05) and rule.timeout_s == pytest.approx(0.25)
    assert StopRule.from_json(StopRule(stopping="noise").to_json()).stopping == "noise"
    # a rule recorded before "stopping" existed was nvbench's noise rule
    old = {"max_noise": 0.005, "min_samples": 10, "min_time_s": 0.5, "timeout_s": 5.0}
    assert StopRule.from_json(old).stopping == "noise"
    with pytest.raises(ValueError):
        StopRule(stopping="entropy")


def test_the_stopper_checks_at_growing_intervals_and_still_stops() -> None:
    calls = []

    class Counting(StopRule):
        def spread(self, samples: object) -> float:
            calls.append(len(samples))  # type: ignore[arg-type]
            return 0.0 if len(samples) >= 1000 else 1.0  # type: ignore[arg-type]

    stopper = Stopper(Counting(min_time_s=0.0, timeout_s=1e9), host_clock=False)
    samples: list[float] = []
    while stopper.ended(samples, 0.0) is None:
        samples.append(1.0)
    assert 1000 <= len(samples) <= 1050  # at most 5% past the sample that met the target
    assert len(calls) < 100  # not once per sample


def test_median_interval_is_ordered_and_widens_for_dependent_samples() -> None:
    rng = np.random.default_rng(5)
    iid = rng.normal(100, 10, 2000)
    drifting = np.sort(iid)[np.argsort(np.argsort(rng.normal(size=2000).cumsum()))]
    low, mid, high = median_interval(iid)
    assert low < mid < high and mid == pytest.approx(float(np.median(iid)))
    d_low, _, d_high = median_interval(drifting)  # the same values, in a random walk's order
    assert (d_high - d_low) > 3 * (high - low)
    assert median_half_width([1.0, 2.0]) == math.inf


def test_relative_stddev_single_sample_is_infinite() -> None:
    assert relative_stddev([1.0]) == math.inf


def test_speedup_interval_brackets_the_ratio() -> None:
    rng = np.random.default_rng(0)
    stream = 10 + rng.normal(0, 0.1, 200)
    graph = 5 + rng.normal(0, 0.05, 200)
    iv = speedup_interval([stream], [graph])
    assert iv.low < iv.median < iv.high
    assert iv.median == pytest.approx(float(np.median(stream) / np.median(graph)))
    assert 1.95 < iv.low and iv.high < 2.05


def test_the_speedup_is_the_ratio_of_the_figures_medians_over_placements() -> None:
    """Synthetic: three placements per side; the point is median-of-medians over
    median-of-medians, the figures bench reports, not a pooled median."""
    stream = [[10.0] * 5, [30.0] * 5, [12.0] * 5]
    graph = [[5.0] * 5, [6.0] * 5, [100.0] * 5]
    iv = speedup_interval(stream, graph)
    assert iv.median == pytest.approx(12.0 / 6.0)


def _heavy_tailed(rng: np.random.Generator, median: float, size: int) -> np.ndarray:
    """Synthetic timings with a known median: lognormal body (median exactly `median`) plus
    a Pareto tail on 5% of the samples, which lies above the body's median and so, at 5%,
    moves the population median: that is computed, not assumed (see _true_median)."""
    body = median * rng.lognormal(0.0, 0.15, size)
    tail = rng.random(size) < 0.05
    body[tail] = median * (1.5 + rng.pareto(1.5, int(tail.sum())))
    return body


def _true_median(median: float) -> float:
    """The population median of _heavy_tailed: P(X <= m) = 0.95 * Phi(ln(m/median)/0.15)
    (the tail lies above 1.5 * median), so m = median * exp(0.15 * Phi^-1(0.5/0.95))."""
    from statistics import NormalDist

    return median * math.exp(0.15 * NormalDist().inv_cdf(0.5 / 0.95))


# Seeded trials of the coverage simulation: 1,000 under the thorough profile; 400 by default,
# where an interval covering only 90% would still fail (it would need two standard
# deviations of luck to reach 93%).
TRIALS = examples(400, 1000)


@pytest.mark.parametrize("quantum", [0.0, 0.5e-6])
def test_the_speedup_interval_covers_the_true_ratio(quantum: float) -> None:
    """Coverage by simulation: heavy-tailed samples, raw or quantised to the
    CUDA-event quantum, with a known true ratio of medians; the nominal 95% interval must
    cover it in at least 93% of TRIALS seeded trials, and the point must lie strictly
    inside every interval of non-zero width."""
    true = _true_median(20e-6) / _true_median(8e-6)
    covered = 0
    for seed in range(TRIALS):
        rng = np.random.default_rng(seed)
        groups = [[_heavy_tailed(rng, mid, 150) for _ in range(3)] for mid in (20e-6, 8e-6)]
        if quantum:
            groups = [[np.round(g / quantum) * quantum for g in side] for side in groups]
        iv = speedup_interval(groups[0], groups[1], quantum_s=quantum, seed=seed)
        covered += iv.low <= true <= iv.high
        if iv.high > iv.low:
            assert iv.low < iv.median < iv.high, (seed, iv)
    assert covered >= 0.93 * TRIALS, (covered, TRIALS)


def test_fit_line_recovers_a_and_b() -> None:
    xs = [1, 2, 4, 8, 16, 1000]
    fit = fit_line(xs, [2e-6 + 0.5e-6 * x for x in xs])
    assert fit.a_s == pytest.approx(2e-6) and fit.b_s == pytest.approx(0.5e-6)
    assert fit.r2 == pytest.approx(1.0)


def _quantised(rng: np.random.Generator, mean: float, spread: float, size: int,
               quantum: float = 0.5e-6) -> np.ndarray:
    """Synthetic event timings: normal around `mean`, rounded to the timer's quantum."""
    return np.round((mean + rng.normal(0, spread, size)) / quantum) * quantum


def test_quantised_samples_do_not_collapse_to_a_point() -> None:
    """Synthetic: every stream sample reads 25.0 us and every graph sample 16.0 us after
    quantisation (as chain's device figures did): the spread gives no width, the quantum
    does."""
    rng = np.random.default_rng(1)
    stream = _quantised(rng, 25.0e-6, 0.05e-6, 300)
    graph = _quantised(rng, 16.0e-6, 0.05e-6, 300)
    assert len(set(stream)) == 1 and len(set(graph)) == 1  # fully quantised
    iv = speedup_interval([stream], [graph], quantum_s=0.5e-6)
    assert iv.median == pytest.approx(1.5625)
    assert iv.low < 1.5625 < iv.high
    # one quantum on either side: (25 - 0.5) / (16 + 0.5) .. (25 + 0.5) / (16 - 0.5)
    assert iv.low == pytest.approx(24.5 / 16.5) and iv.high == pytest.approx(25.5 / 15.5)


def test_interval_reflects_drift_within_a_placement() -> None:
    """Synthetic, quantised: a stream path that drifts during its loop gives a wider
    interval than a steady one with the same median (blocks keep the drift)."""
    rng = np.random.default_rng(2)
    graph = _quantised(rng, 16e-6, 0.3e-6, 400)
    steady = _quantised(rng, 25e-6, 0.3e-6, 400)
    drifting = _quantised(rng, 25e-6, 0.3e-6, 400) + np.repeat([-2e-6, 2e-6], 200)
    a = speedup_interval([steady], [graph], quantum_s=0.5e-6)
    b = speedup_interval([drifting], [graph], quantum_s=0.5e-6)
    assert (b.high - b.low) > 1.5 * (a.high - a.low)
    for iv in (a, b):
        assert iv.low < iv.median < iv.high


def test_interval_with_no_quantum_matches_spread_only() -> None:
    rng = np.random.default_rng(3)
    stream, graph = 10 + rng.normal(0, 0.1, 200), 5 + rng.normal(0, 0.05, 200)
    iv = speedup_interval([stream], [graph], quantum_s=0.0)
    assert 1.97 < iv.low < iv.median < iv.high < 2.03
    with pytest.raises(ValueError):
        speedup_interval([stream], [graph], quantum_s=float("nan"))


def test_a_graph_time_below_the_quantum_stays_finite() -> None:
    iv = speedup_interval([[2e-6] * 20], [[0.5e-6] * 20], quantum_s=0.5e-6)
    assert math.isfinite(iv.high) and iv.low < iv.median < iv.high


def test_figures_are_the_typed_values_a_result_holds() -> None:
    """summarize, speedup_interval and fit_line give Timing, Interval and LineFit (no dict to
    splat), and those serialise with the keys and numbers the certificates hold."""
    samples = [3.0e-6, 1.0e-6, 2.0e-6, 5.0e-6, 4.0e-6]
    timing = summarize(samples, Ended.TIMEOUT)
    assert isinstance(timing, Timing) and timing.ended is Ended.TIMEOUT
    rsd = float(np.std(samples, ddof=1)) / float(np.mean(samples))
    assert timing.to_json() == {
        "samples": 5, "median_s": 3.0e-6, "mean_s": float(np.mean(samples)), "min_s": 1.0e-6,
        "max_s": 5.0e-6, "rel_stddev": rsd, "iqr_s": float(np.percentile(samples, 75)
                                                          - np.percentile(samples, 25)),
        "noise": rsd, "ended": "timeout", "half_width": median_half_width(samples)}
    assert "ended" not in summarize(samples).to_json()  # as pooled figures were written
    interval = speedup_interval([[2.0] * 20], [[1.0] * 20])
    assert isinstance(interval, Interval)
    assert interval.to_json() == {"median": 2.0, "low": 2.0, "high": 2.0, "confidence": 0.95}
    line = fit_line([1, 2, 3], [3.0, 5.0, 7.0])
    assert isinstance(line, LineFit)
    assert line.to_json() == pytest.approx({"a_s": 1.0, "b_s": 2.0, "r2": 1.0})
