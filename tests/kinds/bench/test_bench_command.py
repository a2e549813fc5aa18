"""`graphcert bench` parses, makes one call (run.jobs.bench_plan) and renders: a --sweep is
one run per value of the one workload, fitted with the values in order, shown as a table or
in the --json envelope. No GPU: the runs are replaced by recorded sweep points."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from _certfactory import bench_results
from click.testing import CliRunner

from graphcert.cli import cli
from graphcert.kinds.bench.result import BenchResult
from graphcert.options import Options
from graphcert.run import jobs
from graphcert.run.harness import BenchSettings
from tests.kinds.sweep.test_sweep import RECORDED_H200, _point


@pytest.fixture
def recorded_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """bench_workloads answers each swept reference with a recorded point; returns its calls."""
    calls: list[tuple[Any, ...]] = []
    base = BenchResult.from_json(bench_results((1,)))

    def fake(refs: Any, sizes: Any, settings: Any, **kw: Any) -> list[Any]:
        calls.append((tuple(refs), list(sizes), kw["out_dir"]))
        done = []
        for ref in refs:
            kernels = int(ref.split("=")[1].rstrip("]"))
            done.append(jobs.Certified(ref, replace(base, sizes=(_point(kernels),))))
            if kw.get("on_result") is not None:
                kw["on_result"](done[-1])
        return done

    monkeypatch.setattr(jobs, "bench_workloads", fake)
    return calls


def test_a_sweep_is_one_run_per_value_then_one_fit(recorded_runs: list[tuple[Any, ...]]
                                                   ) -> None:
    values = sorted(RECORDED_H200)
    out = CliRunner().invoke(cli, ["bench", "chain", "--size", "1", "--no-certificate",
                                   "--sweep", "kernels=" + ",".join(map(str, values)),
                                   "--json"])
    assert out.exit_code == 0, out.output
    refs = tuple(f"chain[kernels={k}]" for k in values)
    assert recorded_runs == [(refs, [1], None)]
    doc = json.loads(out.stdout)
    assert [r["workload"] for r in doc["runs"]] == list(refs)
    assert all(r["certificate"] is None for r in doc["runs"])
    assert doc["sweep"]["key"] == "kernels" and doc["sweep"]["values"] == values


def test_a_sweep_on_the_terminal_shows_each_run_then_the_fit(
        recorded_runs: list[tuple[Any, ...]]) -> None:
    out = CliRunner().invoke(cli, ["bench", "chain", "--size", "1", "--no-certificate",
                                   "--sweep", "kernels=16,64"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    text = out.stdout
    assert "nodes=16" in text and "cost per launch = a + b·kernels" in text
    assert text.index("nodes=16") < text.index("nodes=64") < text.index("cost per launch")


def test_bench_plan_fits_the_sweep_over_the_runs_it_made(
        recorded_runs: list[tuple[Any, ...]]) -> None:
    plan = jobs.BenchPlan(("chain[kernels=16]", "chain[kernels=256]"), [1],
                          jobs.SweptOption("kernels", (16, 256), "chain"))
    assert plan.units == 2 * 1 * 3  # runs x sizes x quantities
    done = jobs.bench_plan(plan, BenchSettings(), options=Options())
    assert [r.ref for r in done.runs] == list(plan.refs) and done.passed
    assert done.fit is not None and done.fit.values == (16, 256)
    assert done.sweep_certificate is None and done.sweep_plot is None  # nothing written
    plain = jobs.bench_plan(jobs.BenchPlan(("chain[kernels=16]",), [1]), BenchSettings(),
                            options=Options())
    assert plain.fit is None and len(plain.runs) == 1
