"""A folder gated against itself, or against an identical copy, is a valid comparison with
nothing to report (issue 34 item 6): the baseline is read as its own set, 'N timing(s): N
same' passes, and a figure missing on both sides is no note. The recorded certificates of
reports/ are used as they are; the nesting cases use synthetic ones (tests/_certfactory.py)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from _certfactory import bench_results, certificate
from click.testing import CliRunner, Result

from graphcert.cert.document import write_certificate
from graphcert.cli import cli
from graphcert.kinds.bench.compare import compare_bench
from graphcert.kinds.bench.result import BenchResult

ROOT = Path(__file__).resolve().parents[2]
CLEAN = "gate: PASS (0 failed rule(s), 0 warning(s))"


def _gate(*args: str) -> Result:
    return CliRunner().invoke(cli, ["gate", *args], catch_exceptions=False)


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the repository's policy in ./pyproject.toml
    for name in ("GITHUB_STEP_SUMMARY", "GRAPHCERT_SIGNING_KEY", "GRAPHCERT_SIGNING_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)


def _baseline_rules(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for c in doc["certificates"] for r in c["rules"]
            if r["rule"] in ("allow_topology_change", "max_regression", "max_node_regression")]


def _check_clean_comparison(baseline: str) -> None:
    alone = json.loads(_gate("reports", "--json").stdout)
    result = _gate("reports", "--baseline", baseline, "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert (doc["status"], doc["unusable"]) == ("pass", [])
    # every certificate of reports/ is gated, each met its baseline, and none warns
    assert len(doc["certificates"]) == len(alone["certificates"]) > 0
    rules = _baseline_rules(doc)
    assert len(rules) == len(doc["certificates"])
    assert {r["status"] for r in rules} == {"pass"}
    assert not [r for r in rules if "no baseline certificate" in r["summary"]]
    for r in rules:
        assert re.fullmatch(r"(\d+) timing\(s\): \1 same|\d+ class\(es\) unchanged against .*"
                            r"|a sweep's fit is shown, not compared .*"
                            r"|\d+ node\(s\) within [\d.]+% of .*"  # a profile's nodes
                            r"|the same \d+ topolog(?:y|ies) as .*"  # a record's graphs
                            r"|a plan is gated by max_plan_regret, .*", r["summary"]), r
        assert not [d for d in r["details"] if "unavailable on" in d], r
    table = _gate("reports", "--baseline", baseline)
    assert table.stdout.strip().splitlines()[-1] == CLEAN
    assert "no certificates under" not in table.stderr


def test_a_folder_against_itself(at_root: None) -> None:
    _check_clean_comparison("reports")
    _check_clean_comparison("reports/")


def test_a_folder_against_an_identical_copy(at_root: None, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "reports", tmp_path / "copy")
    _check_clean_comparison(str(tmp_path / "copy"))


@pytest.fixture
def synthetic(synthetic_cli: Path) -> None:
    write_certificate(Path("reports/topology-scan.json"), certificate("topology"))
    write_certificate(Path("reports/bench-scan.json"), certificate("bench"))


def test_a_baseline_inside_the_gated_folder_is_still_left_out_of_it(synthetic: None) -> None:
    write_certificate(Path("reports/base/topology-scan.json"), certificate("topology"))
    write_certificate(Path("reports/base/bench-scan.json"), certificate("bench"))
    result = _gate("reports", "--baseline", "reports/base", "--json")
    assert result.exit_code == 0, result.stderr
    paths = [c["path"] for c in json.loads(result.stdout)["certificates"]]
    assert sorted(paths) == ["reports/bench-scan.json", "reports/topology-scan.json"]


def test_a_gated_folder_inside_the_baseline(synthetic: None) -> None:
    write_certificate(Path("reports/sub/topology-join.json"), certificate("topology", ref="join"))
    result = _gate("reports/sub", "--baseline", "reports", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [c["path"] for c in doc["certificates"]] == ["reports/sub/topology-join.json"]
    (rule,) = _baseline_rules(doc)
    assert rule["status"] == "pass" and "against reports/sub/topology-join.json" in rule["summary"]


def _without_device(results: dict[str, Any]) -> dict[str, Any]:
    """Synthetic: every device timing unavailable, as on a step whose framework cannot queue
    behind the blocking kernel."""
    for size in results["sizes"]:
        for side in ("stream", "graph"):
            size[side]["device"] = None
            size[side]["device_unavailable_reason"] = "synthetic: not measured"
    return results


def test_a_figure_missing_on_both_sides_is_no_note() -> None:
    with_device = BenchResult.from_json(bench_results())
    without = BenchResult.from_json(_without_device(bench_results()))
    comps, notes = compare_bench(without, without)
    assert notes == [] and {c.quantity for c in comps} == {"host_enqueue", "end_to_end"}
    # missing on one side only is still said, naming the side
    assert compare_bench(without, with_device)[1] == [
        f"n=256 {side} device time unavailable on the baseline" for side in ("stream", "graph")]
    assert compare_bench(with_device, without)[1] == [
        f"n=256 {side} device time unavailable on current" for side in ("stream", "graph")]
