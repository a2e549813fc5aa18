"""benchmarks/spread_summary.py on the figures spread_vs_nvbench.sh printed on an H100 on
2026-11-23 (benchmarks/NOTES.md), on the H100 contexts probe of the same day, and on
synthetic cases."""

from __future__ import annotations

import importlib.util
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "spread_summary.py"


Rows = list[dict[str, Any]]


def _summary() -> Callable[[Rows], list[str]]:
    spec = importlib.util.spec_from_file_location("spread_summary", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    summary: Callable[[Rows], list[str]] = module.summary
    return summary


def _rows(ours: list[float], theirs: list[float]) -> Rows:
    rows: Rows = [{"tool": "graphcert", "stream": v, "graph": 1.0} for v in ours]
    return rows + [{"tool": "nvbench", "stream": v, "graph": 1.0} for v in theirs]


def test_the_h100_run_of_2026_11_23() -> None:
    lines = _summary()(_rows([2.0250, 1.9620, 1.9740, 2.1860], [2.0139, 2.1056, 1.9291, 2.1147]))
    assert "graphcert 1.9620-2.1860 (11.2% of its median)" in lines[0]
    assert "nvbench 1.9291-2.1147 (9.0%)" in lines[0]
    assert lines[-1] == "stream range no wider than nvbench's: NO"


def test_a_narrower_range_meets_the_target() -> None:  # synthetic figures
    lines = _summary()(_rows([1.00, 1.01, 1.02], [1.00, 1.05, 1.10]))
    assert lines[-1] == "stream range no wider than nvbench's: yes"


def test_one_process_is_not_enough() -> None:  # synthetic figures
    assert _summary()(_rows([1.0], [1.0, 1.1])) == ["need at least two processes of each tool"]


# `python3 benchmarks/fidelity_probe.py --one contexts x 16` in three fresh processes on an
# H100 (2026-11-23, benchmarks/NOTES.md): the stream path's µs per kernel in five fresh primary
# contexts of each process, one after another.
CONTEXTS_PROBE = [[2.02587, 2.15975, 2.01808, 2.06168, 2.10031],
                  [2.15085, 2.00232, 2.00788, 2.15023, 2.00950],
                  [2.19403, 2.16043, 2.20558, 2.16166, 2.13579]]


def test_estimators_over_placements_on_the_h100_contexts_probe() -> None:
    rows = [{"tool": "graphcert", "stream": statistics.median(p), "graph": 1.0,
             "stream_placements": p} for p in CONTEXTS_PROBE]
    rows += [{"tool": "nvbench", "stream": v, "graph": 1.0} for v in (2.0, 2.1)]  # synthetic
    lines = _summary()(rows)
    by = {line.split(" by the ")[1].split(" of ")[0]: line for line in lines if " by the " in line}
    assert by["median"].endswith("7.4% apart")  # (2.16166 - 2.00950) / 2.06168
    assert by["mean"].endswith("5.2% apart")
    assert by["lowest"].endswith("6.6% apart")


def test_no_estimator_lines_without_placements() -> None:  # synthetic figures
    lines = _summary()(_rows([1.00, 1.01], [1.00, 1.05]))
    assert not any(" by the " in line for line in lines)
