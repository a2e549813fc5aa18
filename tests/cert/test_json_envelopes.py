"""The `--json` envelopes of verify and bench are built in render/ (one function each) with
the keys users' scripts read: synthetic results (tests/_certfactory.py)."""

from __future__ import annotations

import json
from pathlib import Path

from _certfactory import bench_results, topology_results

from graphcert.kinds.bench.result import BenchResult
from graphcert.kinds.bench.views import bench_json
from graphcert.kinds.topology.result import VerifyResult
from graphcert.kinds.topology.views import verify_json


def test_verify_json_names_each_workloads_verdict_results_and_certificate() -> None:
    result = VerifyResult.from_json(topology_results((256,)))
    doc = json.loads(verify_json([("scan", result, Path("reports/t.json")),
                                  ("join", result, None)]))
    assert [d["workload"] for d in doc] == ["scan", "join"]
    assert set(doc[0]) == {"workload", "passed", "status", "reasons", "results", "certificate"}
    assert doc[0]["passed"] is result.verdict.passed
    assert doc[0]["status"] == result.verdict.status.value
    assert doc[0]["results"] == result.to_json()
    assert (doc[0]["certificate"], doc[1]["certificate"]) == ("reports/t.json", None)


def test_bench_json_holds_the_runs_and_the_sweep() -> None:
    result = BenchResult.from_json(bench_results())
    doc = json.loads(bench_json([("chain", result, None)], None))
    assert doc["sweep"] is None
    assert doc["runs"] == [{"workload": "chain", "results": result.to_json(),
                            "certificate": None}]
