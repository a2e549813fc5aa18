"""A bucket list's figures over a traffic mix (presets and users' lists too), cost curves'
interpolation, and the engines' forms of a list. Curves and traffic are synthetic
(tests/_plancurves.py: made up, not measured)."""

from __future__ import annotations

import pytest
from _plancurves import US, curve_of, problems, reference_time
from hypothesis import given, settings
from hypothesis import strategies as st

from graphcert.buckets import sglang_capture_sizes, vllm_capture_sizes
from graphcert.errors import InputError
from graphcert.plan.costs import Budgets, CostCurve, CostPoint
from graphcert.plan.engines import Engine, engine_args
from graphcert.plan.evaluate import evaluate
from graphcert.plan.traffic import Traffic

# Synthetic: measured at 1, 8 and 64 only; everything between is interpolated.
SPARSE = curve_of([(1, 10, 20, 0.5, 4 << 20), (8, 17, 90, 1.2, 11 << 20),
                   (64, 73, 650, 4.0, 67 << 20)])
MIX = Traffic.from_counts({3: 6, 8: 3, 40: 1}, "synthetic traffic")


def test_interpolation_is_linear_marked_and_never_extrapolated() -> None:
    point = SPARSE.at(4)  # 3/7 of the way from 1 to 8
    assert not point.measured and SPARSE.at(8).measured
    assert point.replay_s == pytest.approx(13 * US) and point.eager_s == pytest.approx(50 * US)
    assert point.capture_s == pytest.approx(0.8)
    assert point.pool_bytes == 7 << 20
    assert curve_of([(1, 1, 1, 0, 0), (4, 1, 1, 0, 1)]).at(2).pool_bytes == 1  # 1/3, rounded up
    for outside in (0, 65):
        with pytest.raises(InputError, match=f"size {outside} is outside the cost curve"):
            SPARSE.at(outside)


def test_a_list_by_hand() -> None:
    figures = evaluate([4, 8], MIX, SPARSE, Budgets(max_graphs=1, memory_budget=10 << 20))
    # 3 -> 4 (13 us), 8 -> 8 (17 us), 40 runs eager (interpolated: 410 us)
    assert figures.expected_s == pytest.approx((6 * 13 + 3 * 17 + 410) / 10 * US)
    assert figures.padded_rows == pytest.approx(0.6)  # 6 steps of 3 padded to 4
    assert figures.padded_fraction == pytest.approx(6 / (6 * 4 + 3 * 8))
    assert figures.eager_share == pytest.approx(0.1)
    assert figures.memory_bytes == (7 + 11) << 20 and figures.capture_s == pytest.approx(2.0)
    assert figures.interpolated == (4, 40) and figures.label == "4,8" and figures.graphs == 2
    assert figures.over_budget == ("2 graphs > max_graphs 1",
                                   "18,874,368 pool bytes > memory budget 10,485,760")
    assert not figures.fits


def test_presets_are_the_engines_lists() -> None:
    flat = curve_of([(s, 10, 20, 0.1, 1) for s in (1, 512)])
    traffic = Traffic.from_counts({1: 1, 300: 1}, "synthetic traffic")
    assert evaluate("vllm:512", traffic, flat).buckets == tuple(vllm_capture_sizes(512))
    assert evaluate("sglang:512", traffic, flat).buckets == tuple(sglang_capture_sizes(512))
    assert evaluate("1..512", traffic, flat).buckets == tuple(1 << k for k in range(10))
    assert evaluate("vllm:256", traffic, flat).eager_share == 0.5  # 300 is above 256


@pytest.mark.parametrize("bad,word", [("vllm:", "has no maximum"), ("4,2", "not ascending"),
                                      ("1,x", "not an integer"), ("0,4", "bucket of 0")])
def test_bad_lists_are_one_line(bad: str, word: str) -> None:
    with pytest.raises(InputError, match=word) as info:
        evaluate(bad, MIX, SPARSE)
    assert "\n" not in info.value.one_line()


def test_a_bucket_beyond_the_curve_is_refused() -> None:
    with pytest.raises(InputError, match="size 72 is outside the cost curve"):
        evaluate("vllm:128", MIX, SPARSE)
    with pytest.raises(InputError, match="not ascending"):
        evaluate([8, 4], MIX, SPARSE)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(problems(), st.data())
def test_figures_match_the_slow_way(problem: tuple[CostCurve, dict[int, int], Budgets],
                                    data: st.DataObject) -> None:
    curve, counts, _ = problem
    chosen = sorted(data.draw(st.sets(st.sampled_from(curve.sizes))))
    figures = evaluate(chosen, Traffic.from_counts(counts), curve)
    assert figures.expected_s == pytest.approx(reference_time(chosen, counts, curve), rel=1e-12)
    total = sum(counts.values())
    padded = sum(c * (min(b for b in chosen if b >= n) - n)
                 for n, c in counts.items() if chosen and n <= chosen[-1])
    assert figures.padded_rows == pytest.approx(padded / total, abs=1e-12)
    assert figures.memory_bytes == sum(curve.at(b).pool_bytes for b in chosen)


def test_cost_points_refuse_bad_figures() -> None:
    with pytest.raises(InputError, match="replay_s is -1"):
        CostPoint(4, -1.0, 1.0, 1.0, 1)
    with pytest.raises(InputError, match="not ascending"):
        CostCurve((CostPoint(8, 1, 1, 1, 1), CostPoint(4, 1, 1, 1, 1)))
    with pytest.raises(InputError, match="no point"):
        CostCurve(())


def test_engine_forms() -> None:
    sizes = [1, 2, 4, 8]
    assert engine_args(sizes, Engine.VLLM) == "--cudagraph-capture-sizes 1 2 4 8"
    assert engine_args(sizes, Engine.VLLM_BEFORE_0_11) == "--cuda-graph-sizes 1 2 4 8"
    assert engine_args(sizes, Engine.VLLM_CONFIG) == \
        "--compilation-config '{\"cudagraph_capture_sizes\": [1, 2, 4, 8]}'"
    assert engine_args(sizes, Engine.SGLANG) == "--cuda-graph-bs 1 2 4 8"
    assert engine_args(sizes, Engine.TRTLLM) == \
        "cuda_graph_config: {batch_sizes: [1, 2, 4, 8], enable_padding: true}"
    assert [engine_args([], e) for e in Engine] == [
        "--enforce-eager", "--enforce-eager", "--enforce-eager", "--disable-cuda-graph",
        "cuda_graph_config: null"]
