"""The page `graphcert report` writes: the gate's report, each certificate it gated (the typed
values the gate loaded, not read again), and every graph snapshot found under the paths drawn
(inline SVG where Graphviz's `dot` is installed). Reads files and runs `dot`; no CUDA. The
page itself is graphcert.render.html."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from graphcert.cert.store import is_snapshot, read_document
from graphcert.gate import GateRun, display_path, find_json_files
from graphcert.model import load_snapshot
from graphcert.render.dot import snapshot_to_dot
from graphcert.render.graphviz import dot_path, dot_to_svg, note_missing_dot
from graphcert.render.html import Picture, render_html


@dataclass(frozen=True)
class ReportPage:
    """The HTML text, and how many certificates and graphs it shows."""

    html: str
    certificates: int
    graphs: int


def report_page(run: GateRun, paths: Sequence[Path], baseline: Path | None) -> ReportPage:
    """The page of `run` (the gate run over `paths`, `baseline` left out of the graphs)."""
    certs = {c.path: run.certificates[c.path] for c in run.report.certificates}
    pictures = _pictures(find_json_files(list(paths), exclude=baseline)[0])
    return ReportPage(render_html(run.report, certs, pictures), len(certs), len(pictures))


def _pictures(files: list[Path]) -> list[Picture]:
    """Every snapshot among `files`, drawn once Graphviz is known to be there."""
    have_dot = dot_path() is not None
    if not have_dot:
        note_missing_dot()
    out = []
    for f in files:
        if not is_snapshot(read_document(f)):
            continue
        snap = load_snapshot(f)
        svg = None
        if have_dot:
            title = f"{snap.meta.get('name', f.stem)} class {snap.meta.get('capacity', '?')}"
            svg = _inline(dot_to_svg(snapshot_to_dot(snap, title)))
        out.append(Picture(display_path(f), snap, svg))
    return out


def _inline(svg: str | None) -> str | None:
    """Graphviz's SVG without its XML prolog and DOCTYPE, ready to sit inside HTML."""
    if svg is None:
        return None
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else None
