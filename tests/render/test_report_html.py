"""`graphcert report`: one self-contained HTML page from the recorded certificates under
reports/ and the recorded snapshots under tests/fixtures/snapshots/, and its rendering in a
real browser (headless Chromium, where it is installed)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from _certfactory import bench_results, certificate
from click.testing import CliRunner

from graphcert.cert.certificate import Certificate
from graphcert.cli import cli
from graphcert.kinds.sweep.html import sweep_points, sweep_svg
from tests._env import committed_report

ROOT = Path(__file__).resolve().parents[2]
SNAPS = ROOT / "tests" / "fixtures" / "snapshots"


@pytest.fixture
def page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    certs = [committed_report("topology", "scan"), committed_report("bench", "scan")]
    work = tmp_path / "in"
    work.mkdir()
    for f in [*certs, *sorted(SNAPS.glob("scan-*.snapshot.json"))]:
        shutil.copy(f, work / f.name)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["report", "in", "-o", "report.html"])
    assert result.exit_code == 0, result.output
    assert "report: report.html (2 certificates, 3 graphs; gate PASS)" in result.stderr
    return tmp_path / "report.html"


def test_report_has_verdict_certificates_classes_timings(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    topology = committed_report("topology", "scan").name
    assert "gate: PASS" in text and f"in/{topology}" in text
    for heading in ("Capacity classes", "Transitions between classes", "Timings"):
        assert f"<h3>{heading}</h3>" in text, heading
    assert "<h2 id='certificates'>Certificates</h2>" in text
    assert "<h3 id='graphs-scan'>Graphs</h3>" in text
    assert "<b>topology</b>" in text  # scan's graph grows a level between classes


def test_report_is_self_contained(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text.lower() and "@import" not in text
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text, re.I)
    assert "url(" not in text and "<!DOCTYPE svg" not in text


def test_each_topology_is_pictured_once_by_graphviz_or_graphcert(page: Path) -> None:
    """scan's three snapshots have two topologies (class 256 is one kernel; 512 and 1024
    three): two pictures, and class 1024 named in the picture of 512's."""
    text = page.read_text(encoding="utf-8")
    assert text.count("<figure id='topology-") == 2 and text.count("<svg") == 2
    assert "scan_block_sums" in text and "the same topology: class 1,024" in text
    if shutil.which("dot") is None:  # graphcert's own drawing, and how to get Graphviz's
        assert text.count("class='layered'") == 2 and "apt-get install graphviz" in text


def test_sweep_is_drawn_from_bench_certificates_that_differ_in_one_option() -> None:
    """Synthetic bench certificates (made-up round timings) that differ in one option."""
    def doc(kernels: int, stream: float, graph: float) -> Certificate:
        made = certificate("bench", ref="chain",
                           results=bench_results((256,), stream_s=stream, graph_s=graph))
        made["workload"]["options"] = {"kernels": kernels}
        return Certificate.from_document(made)
    docs = [doc(100, 3e-4, 1e-4), doc(1, 1e-5, 9e-6), doc(10, 4e-5, 2e-5)]
    assert sweep_points(docs) == ("kernels", [(1.0, 1e-5, 9e-6), (10.0, 4e-5, 2e-5),
                                              (100.0, 3e-4, 1e-4)])
    svg = sweep_svg(docs)
    assert svg is not None and svg.count("<polyline") == 2 and "kernels" in svg
    assert sweep_svg(docs[:1]) is None


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None,
                    reason="headless Chromium is not installed (Debian: apt-get install "
                           "chromium)")
def test_report_renders_in_headless_chromium(page: Path, tmp_path: Path) -> None:
    exe = _chromium()
    assert exe is not None
    shot = tmp_path / "report.png"
    flags = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    subprocess.run([*flags, "--window-size=1100,2400", f"--screenshot={shot}",
                    page.as_uri()], capture_output=True, timeout=120, check=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # not a blank page
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert "gate: PASS" in dom and "Capacity classes" in dom and "Contents" in dom
    assert dom.count("<svg") == 2  # scan's two topologies, drawn by Graphviz or graphcert


def test_report_of_nothing_usable_is_one_line_per_problem_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "missing"), "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr.startswith("graphcert: error: ") and "no such file" in result.stderr
