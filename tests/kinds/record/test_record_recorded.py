"""graphcert record's analysis and gate on runs recorded on an H100 (tests/fixtures/record/ and
reports/: examples/record/serve_torch.py good, --fallback and --recapture 500; see
tests/fixtures/README.md): coverage, the eager kernels of steady state, churn, and the gate's
verdicts on each."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner, Result

from graphcert.cert.store import load_certificate
from graphcert.cli import cli
from graphcert.kinds.record.result import RecordResult

ROOT = Path(__file__).resolve().parents[3]
PLANTED = ROOT / "tests" / "fixtures" / "record"
POLICY = ROOT / "examples" / "record" / "policy.toml"


def _result(path: Path) -> RecordResult:
    result = load_certificate(path).result
    assert isinstance(result, RecordResult)
    return result


def _gate(*paths: Path) -> Result:
    """`graphcert gate PATHS --policy POLICY` run from the checkout, in this process (the
    tests are about the verdicts, not the process)."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        result = CliRunner().invoke(cli, ["gate", *map(str, paths), "--policy", str(POLICY)])
    finally:
        os.chdir(here)
    # a crash would exit 1 too: only the gate's own exit counts
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def test_the_good_run_is_covered_by_graphs_and_never_churns() -> None:
    (path,) = (ROOT / "reports").glob("record-serve_torch-*.json")
    rec = _result(path).recorded
    assert rec.steady.eager_kernels == 0 and rec.steady.graph_kernels > 0
    assert rec.churn == () and rec.steady_eager == ()
    assert all(g.snapshot_file for g in rec.graphs)  # every graph read at instantiation
    assert _gate(path).exit_code == 0


def test_the_fallback_run_names_its_eager_kernels_and_fails_the_gate() -> None:
    (path,) = PLANTED.glob("record-serve_torch_--fallback-*.json")
    rec = _result(path).recorded
    names = {e.name for e in rec.steady_eager}
    assert any("nvjet" in n for n in names) and any("Gelu" in n for n in names)
    assert rec.steady.eager_kernels == sum(e.count for e in rec.steady_eager) > 0
    # every one of them was launched inside the example's NVTX range around its eager path
    assert rec.regions is not None and rec.regions.unavailable is None
    assert [(g.region, g.count) for g in rec.regions.groups] == [("eager b16",
                                                                  rec.steady.eager_kernels)]
    done = _gate(path)
    assert done.exit_code == 1
    assert "min_graph_coverage" in done.stdout and "nvjet" in done.stdout
    assert "NVTX range eager b16" in done.stdout


def test_the_recapture_run_churns_one_topology_and_fails_the_gate() -> None:
    (path,) = PLANTED.glob("record-serve_torch_--recapture_500-*.json")
    rec = _result(path).recorded
    (churn,) = rec.churn
    assert churn.instantiations > churn.peak_alive == 1
    done = _gate(path)
    assert done.exit_code == 1
    assert "max_instantiations_per_topology" in done.stdout
    assert churn.topology_hash[:12] in done.stdout
