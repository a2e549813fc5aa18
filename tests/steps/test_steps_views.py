"""The per-bucket facts of a framework step (StepBucket) in `verify`/`show` and in the HTML
report: exact cells on synthetic facts, the table drawn only for step certificates, and the
recorded PyTorch certificate under reports/ (real GPU data) rendered cell by cell."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

import graphcert
from graphcert.cert.certificate import Certificate
from graphcert.cert.document import certificate_of, write_certificate
from graphcert.kinds.topology.result import ClassResult, VerifyResult
from graphcert.kinds.topology.steps import StepBucket
from graphcert.kinds.topology.views import BUCKET_COLUMNS, bucket_rows, verify_view
from graphcert.render.html import _results

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
sys.path.insert(0, str(TESTS))
import _certfactory as certfactory  # noqa: E402
import _fakestep as fake  # noqa: E402

# synthetic facts (made-up round numbers, not a GPU recording)
SYNTHETIC = StepBucket("synthetic", capture_s=0.0125, instantiate_s=0.0004,
                       pool_bytes=3 * 2**20, graph_memory={"used_current": 0, "used_high": 2048,
                                                           "reserved_current": 0,
                                                           "reserved_high": 2**21},
                       replay_s=25e-6, eager_s=100e-6, cache_key={"key": "ab" * 32})


def _draw(result: VerifyResult) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=240, color_system=None, no_color=True)
    for part in verify_view("synthetic", result):
        console.print(part)
    return buf.getvalue()


def test_bucket_cells_on_synthetic_facts() -> None:
    classes = (ClassResult(16, True, bucket=SYNTHETIC),
               ClassResult(32, True, bucket=StepBucket("synthetic")),
               ClassResult(64, True))  # no facts: no row
    assert bucket_rows(classes) == [
        ("16", "synthetic", "12.50", "0.40", "3 MiB", "2 KiB / 2 MiB", "25.0", "100.0", "4.0x",
         "abababababab"),
        ("32", "synthetic", "-", "-", "-", "-", "-", "-", "-", "-")]
    text = _draw(VerifyResult(classes, verdict=VerifyResult.judge(classes)))
    assert "buckets (framework step)" in text and "2 KiB / 2 MiB" in text


def test_no_bucket_table_without_bucket_facts() -> None:
    classes = (ClassResult(16, True),)
    text = _draw(VerifyResult(classes, verdict=VerifyResult.judge(classes)))
    assert "buckets (framework step)" not in text and "verify synthetic" in text


def _step_certificate() -> dict[str, object]:
    result = graphcert.verify_step(fake.SAFE, "4,8", samples=2, ref="x.py:SAFE")
    return certificate_of(result, workload=certfactory.workload("x.py:SAFE", "rowwise"),
                          environment=certfactory.environment())


def test_show_of_a_step_certificate_draws_the_buckets(tmp_path: Path) -> None:
    from graphcert.cli import cli

    cert = _step_certificate()
    path = write_certificate(tmp_path / "topology-rowwise-TEST-GPU.json", cert, key=None)
    done = CliRunner().invoke(cli, ["show", str(path)], env={"COLUMNS": "240",
                                                            "NO_COLOR": "1"})
    assert done.exit_code == 0, done.output
    keys = [c["bucket"]["cache_key"]["key"][:12] for c in cert["results"]["classes"]]
    assert "buckets (framework step)" in done.output
    assert all(k in done.output for k in keys), keys


def test_html_shows_buckets_for_steps_only() -> None:
    step = _results(Certificate.from_document(_step_certificate()))
    assert "Buckets (framework step)" in step and "eager/replay" in step
    builtin = _results(Certificate.from_document(certfactory.certificate("topology")))
    assert "Buckets (framework step)" not in builtin


def test_recorded_torch_certificate_renders_every_bucket() -> None:
    """reports/ holds a real PyTorch topology certificate (H100); each of its classes has
    a row whose cells are its facts in the table's units."""
    (path,) = sorted((ROOT / "reports").glob("topology-torch_decode-*.json"))
    doc = json.loads(path.read_text())
    result = VerifyResult.from_json(doc["results"], doc["verdict"])
    rows = bucket_rows(result.classes)
    facts = [c["bucket"] for c in doc["results"]["classes"]]
    assert len(rows) == len(facts) >= 5 and all(len(r) == len(BUCKET_COLUMNS) for r in rows)
    for row, cls, b in zip(rows, doc["results"]["classes"], facts, strict=True):
        assert row[0] == f"{cls['capacity']:,}" and row[1] == "torch"
        assert row[2] == f"{b['capture_s'] * 1e3:,.2f}"
        assert row[6] == f"{b['replay_s'] * 1e6:,.1f}"
        assert row[8] == f"{b['eager_s'] / b['replay_s']:.1f}x"
        assert row[9] == b["cache_key"]["key"][:12]
        assert row[4].endswith("iB") or row[4].endswith(" B")  # pool bytes, human units
