"""The pure parts of benchmarks/replay_methods.py: figures, the table, replay spans from
records, the flush's extra per node, and the tables built from what child processes send.
Every number here is synthetic (made up for the test), not a measurement."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from _replay_table import (  # noqa: E402  (the benchmarks folder is not a package)
    METHODS,
    Figure,
    FlushCase,
    figure_json,
    format_flush,
    format_rows,
    launch_spans,
)
from replay_methods import (  # noqa: E402
    flush_table,
    main,
    order_line,
    size_of,
    subject_table,
)


def test_figure_median_interval_and_count() -> None:
    fig = Figure.of([1e-6 * x for x in range(1, 102)])  # synthetic: 1..101 µs
    assert fig.median_s == pytest.approx(51e-6)
    assert fig.low_s < fig.median_s < fig.high_s
    assert fig.count == 101 and fig.skipped is None


def test_figure_of_nothing_is_skipped_with_a_reason() -> None:
    assert Figure.of([]).skipped == "no samples"
    assert figure_json({"skipped": "the blocker timed out"}).skipped == "the blocker timed out"


def test_rows_in_method_order_with_ratio_to_row_3() -> None:
    figures = {"4": Figure.of([2e-6] * 10), "3": Figure.of([1e-6] * 10),
               "10a": Figure.of([5e-6] * 10), "6": Figure.skip("no launch records")}
    lines = format_rows("synthetic subject", figures)
    assert lines[0] == "synthetic subject"
    keys = [line.split()[0] for line in lines[2:]]
    assert keys == ["3", "4", "6", "10a"]  # METHODS order, absent rows left out
    row4 = next(line for line in lines if line.split()[0] == "4")
    assert "x2.000 of row 3" in row4 and " 2.0 " in row4
    row10 = next(line for line in lines if line.split()[0] == "10a")
    assert "of row 3" not in row10  # host time is not a device figure: no ratio
    assert "skipped: no launch records" in next(line for line in lines
                                                if line.split()[0] == "6")


def test_every_method_key_is_unique() -> None:
    keys = [key for key, _ in METHODS]
    assert len(keys) == len(set(keys))


def test_launch_spans_group_by_launch_and_keep_complete_ones() -> None:
    # synthetic records (correlation id, start ns, end ns): launch 7 has 3 kernels, launch 9
    # 3, launch 8 only 2 (incomplete: left out), launch 5 is a warm-up launch
    records = [(7, 1_000, 1_500), (7, 1_600, 2_000), (7, 2_100, 3_000),
               (9, 10_000, 10_100), (9, 10_200, 10_300), (9, 10_400, 12_000),
               (8, 5_000, 5_100), (8, 5_200, 5_300),
               (5, 0, 10), (5, 20, 30), (5, 40, 50)]
    spans, per_launch = launch_spans(records, skip_first=1)
    assert per_launch == 3
    assert spans == pytest.approx([2_000e-9, 2_000e-9])


def test_launch_spans_of_no_records() -> None:
    assert launch_spans([]) == ([], 0)


def test_flush_extra_per_node() -> None:
    case = FlushCase("synthetic x1000", 1000, Figure.of([700e-6] * 5), Figure.of([880e-6] * 5))
    assert case.extra_per_node_s == pytest.approx(180e-9)
    (_, _, line) = format_flush([case])
    assert line.split()[-1] == "180.0" and "synthetic x1000" in line


def test_flush_table_skips_a_case_without_samples() -> None:
    got = {"flush": [{"label": "synthetic x16", "nodes": 16, "warm": {"samples": []},
                      "flushed": {"samples": [1e-6, 2e-6]}}]}
    assert "skipped: no samples" in flush_table(got)[-1]
    assert "failed: exit 1: boom" in flush_table({"error": "exit 1: boom"})[0]


def test_subject_table_from_child_results() -> None:
    plain = {"nodes": 16, "wall_s": 1.0,
             "rows": {"3": {"samples": [10e-6] * 20}, "1": {"samples": [8e-6] * 20}}}
    kernel = {"nodes": 16, "wall_s": 2.0,
              "rows": {"3k": {"samples": [8e-6] * 20}, "9": {"samples": [12e-6] * 20},
                       "8": {"skipped": "no kernel records in a graph"}}}
    lines = subject_table("synthetic", plain, kernel)
    assert lines[0] == "synthetic (16 nodes; children took 1.0 + 2.0 s)"
    row9 = next(line for line in lines if line.split()[0] == "9")
    assert "x1.200 of row 3" in row9 and "x1.500 of row 3k" in row9
    assert "skipped: no kernel records in a graph" in next(
        line for line in lines if line.split()[0] == "8")


def test_subject_table_names_a_failed_child() -> None:
    lines = subject_table("synthetic", {"error": "exit 1: no driver"}, {"nodes": 2, "rows": {}})
    assert lines[-1] == "  plain child failed: exit 1: no driver"


def test_sizes_follow_bench_and_profile() -> None:
    assert size_of("chain[kernels=1000]") == 1
    assert size_of("scan") == 1 << 16


def test_too_few_replays_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--replays", "5"]) == 2
    out = capsys.readouterr().out.strip()
    assert out.count("\n") == 0 and "--replays 5" in out


def test_order_line_gives_each_timing_step_in_turn() -> None:
    got = {"label": "synthetic", "order": [["B", [598e-6] * 5], ["H", [774e-6] * 5]]}
    assert order_line("BNH", got) == "order BNH on synthetic: B:598.0 H:774.0"
    assert order_line("BNH", {"error": "exit 1: x"}) == "order BNH: failed: exit 1: x"


def test_an_order_with_unknown_steps_is_refused_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--workloads", "", "--orders", "BXZ", "--no-flush-experiment"]) == 0
    out = capsys.readouterr().out
    assert "--orders 'BXZ': use the letters" in out
