"""The bucket planner's optimiser against brute force over every subset, on synthetic cost
curves and traffic (tests/_plancurves.py: made up, not measured), and its budgets."""

from __future__ import annotations

import pytest
from _plancurves import (
    US,
    brute_force,
    curve_of,
    keeping_lists,
    keeps,
    problems,
    reference_time,
)
from _thorough import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphcert.errors import InputError
from graphcert.plan.costs import Budgets, CostCurve
from graphcert.plan.optimise import Infeasible, Method, Plan, choose
from graphcert.plan.traffic import Traffic

# Each example is checked against the brute-force oracle; thorough runs twice as many.
PROPERTY = settings(max_examples=examples(150, 300), deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
EVERYTHING = 1 << 20  # labels: no frontier of 10 candidates is thinned


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-12)


def check_against_brute_force(curve: CostCurve, counts: dict[int, int], budgets: Budgets,
                              *, max_labels: int = EVERYTHING) -> Plan | Infeasible:
    traffic = Traffic.from_counts(counts, "synthetic traffic")
    result = choose(traffic, curve, budgets, max_labels=max_labels)
    best, _ = brute_force(curve.sizes, counts, curve, budgets)
    if isinstance(result, Infeasible):  # only when no single candidate keeps the budgets
        assert not any(keeps([c], curve, budgets) for c in curve.sizes), result.reason
        assert "\n" not in result.reason and result.reason.startswith("no candidate bucket")
        return result
    chosen = result.chosen
    assert keeps(chosen.buckets, curve, budgets) and chosen.fits, (chosen, budgets)
    assert close(chosen.expected_s, reference_time(chosen.buckets, counts, curve))
    if result.exact:
        assert close(chosen.expected_s, best), (chosen.buckets, chosen.expected_s, best)
    else:  # thinned: no better than the optimum, and the bound no worse than it
        assert chosen.expected_s >= best * (1 - 1e-9)
        assert result.lower_bound_s is None or result.lower_bound_s <= best * (1 + 1e-9)
    return result


@PROPERTY
@given(problems())
def test_the_optimum_equals_brute_force_under_any_budgets(
        problem: tuple[CostCurve, dict[int, int], Budgets]) -> None:
    result = check_against_brute_force(*problem)
    if isinstance(result, Plan):
        assert result.method is Method.EXACT and result.why.startswith("exact")


@PROPERTY
@given(problems(), st.sampled_from(["max_graphs", "memory_budget", "capture_budget",
                                    "max_size"]))
def test_one_budget_alone_equals_brute_force(
        problem: tuple[CostCurve, dict[int, int], Budgets], which: str) -> None:
    curve, counts, budgets = problem
    alone = Budgets(**{which: getattr(budgets, which)})
    result = check_against_brute_force(curve, counts, alone)
    assert isinstance(result, Plan) or which in ("memory_budget", "capture_budget")


@PROPERTY
@given(problems())
def test_no_budget_equals_brute_force(
        problem: tuple[CostCurve, dict[int, int], Budgets]) -> None:
    result = check_against_brute_force(problem[0], problem[1], Budgets())
    assert isinstance(result, Plan) and "no budget binds" in result.why


@PROPERTY
@given(problems() | problems(tight=True), st.integers(1, 2))
def test_thinned_frontiers_keep_the_budgets_and_say_not_exact(
        problem: tuple[CostCurve, dict[int, int], Budgets], max_labels: int) -> None:
    result = check_against_brute_force(*problem, max_labels=max_labels)
    if isinstance(result, Plan) and not result.exact:
        assert result.method is Method.THINNED and result.why.startswith("not exact")
        assert "may not be the best" in result.why


# --- budgets, worked by hand ----------------------------------------------------------------

# Synthetic: replay grows with the bucket, eager is 5x replay; pools 10 MiB + 1 MiB a row.
HAND = curve_of([(s, 10 + s, 50 + 5 * s, 0.5, (10 + s) << 20) for s in (1, 2, 4, 8, 16, 32)])
MIX = Traffic.from_counts({1: 50, 3: 20, 8: 20, 30: 10}, "synthetic traffic")


def plan(budgets: Budgets, curve: CostCurve = HAND, traffic: Traffic = MIX) -> Plan:
    result = choose(traffic, curve, budgets)
    assert isinstance(result, Plan), result
    return result


def test_without_budgets_every_traffic_size_gets_its_own_bucket() -> None:
    result = plan(Budgets())
    assert result.chosen.buckets == (1, 4, 8, 32) and result.exact
    assert result.candidates == (1, 2, 4, 8, 16, 32)
    # 1 -> 1, 3 -> 4, 8 -> 8, 30 -> 32: replay 11, 14, 18 and 42 us
    assert result.chosen.expected_s == pytest.approx((50 * 11 + 20 * 14 + 20 * 18 + 10 * 42)
                                                     / 100 * US)
    assert result.chosen.padded_rows == pytest.approx((20 * 1 + 10 * 2) / 100)
    assert "2 serving no traffic size" in result.why  # 2 and 16: 4 and 32 serve the same


def test_each_budget_rules_out_the_unbudgeted_list() -> None:
    free = plan(Budgets()).chosen
    for budgets in (Budgets(max_graphs=2), Budgets(memory_budget=free.memory_bytes - 1),
                    Budgets(capture_budget=free.capture_s - 0.5), Budgets(max_size=30)):
        chosen = plan(budgets).chosen
        assert chosen.buckets != free.buckets and chosen.fits, budgets
        assert chosen.expected_s > free.expected_s
        assert evaluate_breaks(free.buckets, budgets)


def evaluate_breaks(buckets: tuple[int, ...], budgets: Budgets) -> bool:
    return not keeps(buckets, HAND, budgets)


def test_two_graphs_and_a_size_cap() -> None:
    assert plan(Budgets(max_graphs=2)).chosen.buckets == (8, 32)
    assert plan(Budgets(max_graphs=1)).chosen.buckets == (8,)
    capped = plan(Budgets(max_size=30))  # 30 runs eager: no bucket of 30 or more is allowed
    assert capped.chosen.buckets == (1, 4, 8) and capped.chosen.eager_share == 0.1
    assert capped.candidates == (1, 2, 4, 8, 16)


def test_a_budget_that_cannot_bind_changes_nothing_and_says_so() -> None:
    loose = plan(Budgets(max_graphs=6, memory_budget=1 << 40, capture_budget=100.0))
    assert loose.chosen.buckets == plan(Budgets()).chosen.buckets
    assert "max_graphs 6 never binds" in loose.why
    assert "memory budget never binds" in loose.why and "capture budget never binds" in loose.why
    tight = plan(Budgets(max_graphs=2, memory_budget=30 << 20))
    assert "max_graphs 2 binds" in tight.why and "memory budget binds" in tight.why


def test_no_graph_when_eager_beats_every_replay() -> None:
    slow = curve_of([(s, 100, 10, 0.5, 1 << 20) for s in (1, 8, 32)])
    result = plan(Budgets(), curve=slow)
    assert result.chosen.buckets == () and result.chosen.eager_share == 1.0
    assert "every batch runs eager" in result.why


def test_memory_budget_below_every_pool_is_infeasible() -> None:
    result = choose(MIX, HAND, Budgets(memory_budget=1 << 20))
    assert isinstance(result, Infeasible)
    assert result.reason == ("no candidate bucket fits the budgets: the smallest graph pool is "
                             "11,534,336 bytes (bucket 1), above the memory budget 1,048,576")
    error = result.error()
    assert isinstance(error, InputError) and error.exit_code == 2
    assert "\n" not in error.one_line()


def test_capture_budget_below_every_capture_is_infeasible() -> None:
    result = choose(MIX, HAND, Budgets(capture_budget=0.25))
    assert isinstance(result, Infeasible) and "quickest capture takes 0.5 s" in result.reason


def test_max_size_below_every_candidate_is_infeasible() -> None:
    traffic = Traffic.from_counts({1: 1}, "synthetic traffic")
    curve = curve_of([(1, 1, 1, 0.1, 1), (8, 2, 2, 0.1, 1)])
    result = choose(traffic, curve, Budgets(max_size=4), candidates=[8])
    assert isinstance(result, Infeasible)
    assert result.reason == "no candidate bucket is at most max_size 4 (the smallest is 8)"


@pytest.mark.parametrize("kwargs,word", [
    ({"max_graphs": 0}, "max_graphs is 0"), ({"memory_budget": -1}, "memory_budget is -1"),
    ({"capture_budget": float("nan")}, "capture_budget is nan"),
    ({"max_size": 0}, "max_size is 0"), ({"max_graphs": 2.5}, "max_graphs is 2.5")])
def test_bad_budgets_are_one_line(kwargs: dict[str, float], word: str) -> None:
    with pytest.raises(InputError) as info:
        Budgets(**kwargs)  # type: ignore[arg-type]
    assert word in info.value.one_line() and "\n" not in info.value.one_line()


def test_traffic_beyond_max_size_or_the_curve_is_refused() -> None:
    wide = Traffic.from_counts({1: 5, 64: 1}, "synthetic traffic")
    with pytest.raises(InputError, match="size 64 is above max_size 32"):
        choose(wide, HAND, Budgets(max_size=32))
    with pytest.raises(InputError, match="size 64 is outside the cost curve"):
        choose(wide, HAND)


def test_thinning_reports_its_bound() -> None:
    rows = [(s, 10 + s, 40 + 4 * s, 0.25 * (1 + s % 3), (8 + s % 5) << 20)
            for s in range(1, 25)]
    curve = curve_of(rows)
    traffic = Traffic.from_counts({s: 1 + (s * 7) % 5 for s in range(1, 25)},
                                  "synthetic traffic")
    budgets = Budgets(memory_budget=60 << 20, capture_budget=2.0)
    thinned = choose(traffic, curve, budgets, max_labels=2)
    exact = choose(traffic, curve, budgets)
    assert isinstance(thinned, Plan) and isinstance(exact, Plan)
    assert exact.exact and not thinned.exact and thinned.chosen.fits
    assert thinned.lower_bound_s is not None
    assert thinned.lower_bound_s <= exact.chosen.expected_s <= thinned.chosen.expected_s
    assert f"no list within the budgets beats {thinned.lower_bound_s:.6g} s" in thinned.why
    assert "above the best" in thinned.why


# --- tolerance: within it of the best, the fewest graphs win -------------------------------

@PROPERTY
@given(problems(), st.sampled_from([0.005, 0.05, 0.3]))
def test_within_the_tolerance_the_fewest_graphs_win_as_brute_force_finds(
        problem: tuple[CostCurve, dict[int, int], Budgets], tolerance: float) -> None:
    curve, counts, budgets = problem
    traffic = Traffic.from_counts(counts, "synthetic traffic")
    result = choose(traffic, curve, budgets, tolerance=tolerance, max_labels=EVERYTHING)
    if isinstance(result, Infeasible):
        return
    best, _ = brute_force(curve.sizes, counts, curve, budgets)
    within = [subset for subset, t in keeping_lists(curve.sizes, counts, curve, budgets)
              if t <= best * (1 + tolerance) * (1 + 1e-9)]
    fewest = min(len(s) for s in within)
    chosen = result.chosen
    assert keeps(chosen.buckets, curve, budgets)
    assert chosen.expected_s <= best * (1 + tolerance) * (1 + 1e-9)
    assert len(chosen.buckets) == fewest, (chosen.buckets, fewest)
    assert result.tolerance == tolerance and f"{tolerance:.2%}" in result.why


def test_a_flat_curve_within_the_tolerance_needs_one_graph() -> None:
    # Synthetic: replay 10.00-10.04 us at every size, eager 50 us: one bucket at the top
    # serves every batch within 0.5% of the best list, which would take a graph per size.
    flat = curve_of([(s, 10 + s / 100, 50, 0.5, 1 << 20) for s in (1, 2, 3, 4)])
    mix = Traffic.from_counts({1: 1, 2: 1, 3: 1, 4: 1}, "synthetic traffic")
    strict = choose(mix, flat, Budgets())
    loose = choose(mix, flat, Budgets(), tolerance=0.005)
    assert isinstance(strict, Plan) and isinstance(loose, Plan)
    assert strict.chosen.buckets == (1, 2, 3, 4) and loose.chosen.buckets == (4,)


def test_a_tolerance_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(InputError, match="tolerance"):
        choose(MIX, HAND, Budgets(), tolerance=1.5)
