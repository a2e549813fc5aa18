"""The report never contradicts itself (a failing set): each certificate's heading badge is
the gate's verdict on that certificate, the one its table row and the banner give, with the
recorded verdict said beside it where the two differ; and no text is cut: no table cell and
no graph node ends in a clipping ellipsis. The failing set is test_widths_failing's (a
failing certificate of every kind, recorded)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphcert.cli import cli
from tests.render.test_widths_failing import ROOT, inputs

__all__ = ["inputs"]  # the fixture, shared

HEAD = re.compile(r"<p class='certhead' id='[^']*'><b>\w+ certificate</b> <code>([^<]*)</code>"
                  r"(.*?)</p>")
BADGE = re.compile(r"<span class='badge \w+'>(\w+)</span>")
ROW = re.compile(r"<tr><td><span class='badge \w+'>(\w+)</span></td><td><a [^>]*><code>"
                 r"([^<]*)</code>")


@pytest.fixture(scope="module")
def page(inputs: tuple[Path, Path, Path], tmp_path_factory: pytest.TempPathFactory) -> str:
    current, base, policy = inputs
    out = tmp_path_factory.mktemp("page") / "report.html"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        result = CliRunner().invoke(cli, ["report", str(current), "--baseline", str(base),
                                          "--policy", str(policy), "-o", str(out)],
                                    catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return out.read_text()


def test_every_heading_badge_is_the_gates_verdict(page: str) -> None:
    gate = {path: verdict for verdict, path in ROW.findall(page)}
    heads = HEAD.findall(page)
    assert len(heads) == len(gate) == 8, (heads, gate)
    contradictions = [(path, BADGE.findall(rest), gate[path]) for path, rest in heads
                      if BADGE.findall(rest) != [gate[path]]]
    assert contradictions == []
    # a recorded PASS the gate failed says both
    failed = [rest for path, rest in heads if gate[path] == "FAIL"]
    assert failed and all("recorded PASS, gate" in rest for rest in failed)
    assert "gate: FAIL" in page


def test_no_cell_and_no_graph_node_is_cut(page: str) -> None:
    cells = re.findall(r"<td[^>]*>(.*?)</td>", page)
    assert cells
    assert [c for c in cells if re.search(r"…(</code>|</span>)?$", c)] == []
    assert [t for t in re.findall(r"<tspan[^>]*>([^<]*)</tspan>", page) if t.endswith("…")] == []
