"""The stream path's host cost against the bare cuLaunchKernel loop, as bench, show and the
HTML report print it, on certificates recorded on GPUs: reports/ (H100, the bare loop timed
alongside at each size) and tests/fixtures/fleet/ (H200, recorded before that: the run's one
bare loop)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from _env import committed_report

from graphcert.cert.certificate import Certificate
from graphcert.kinds.bench.result import BenchResult
from graphcert.kinds.bench.views import host_cost_line
from graphcert.render.html import _results

FLEET = Path(__file__).resolve().parents[2] / "fixtures" / "fleet"


def _result(path: Path) -> BenchResult:
    return BenchResult.from_json(json.loads(path.read_text())["results"])


def test_the_bare_loop_timed_alongside_is_the_floor() -> None:
    result = _result(committed_report("bench", "chain"))
    (row,) = result.sizes
    assert row.bare_host_per_op_s is not None and row.stream_host_per_op_s is not None
    line = host_cost_line(row, result.bare_launch_s)
    ratio = row.stream_host_per_op_s / row.bare_host_per_op_s
    assert line is not None and "as many launches, timed alternately" in line
    assert line.endswith(f"({ratio:.2f}×)")


def test_older_certificates_fall_back_to_the_runs_bare_loop() -> None:
    result = _result(FLEET / "bench-chain-NVIDIA_H200-ae0f9605.json")
    (row,) = result.sizes
    assert row.bare_host_per_op_s is None and result.bare_launch_s is not None
    line = host_cost_line(row, result.bare_launch_s)
    assert line is not None and "timed once per run" in line
    assert f"{result.bare_launch_s * 1e6:.2f} µs" in line


def test_no_line_where_the_stream_path_is_not_graphcerts_launches() -> None:
    result = _result(committed_report("bench", "chain"))
    row = replace(result.sizes[0], stream_path="record")
    assert host_cost_line(row, result.bare_launch_s) is None


def test_the_html_report_prints_it() -> None:
    cert = Certificate.from_document(json.loads(committed_report("bench", "chain").read_text()))
    assert "stream path host cost per launch" in _results(cert)
