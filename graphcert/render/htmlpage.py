"""The page `graphcert report` writes: the gate's report, each certificate it gated (the typed
values the gate loaded, not read again), and every graph snapshot found under the paths, grouped
by topology and each topology drawn once: inline SVG by Graphviz's `dot` where it is installed,
else by graphcert's own layered drawing for graphs of up to MAX_NODES nodes, else a note saying
how to get a picture. Reads files and runs `dot`; no CUDA. The page itself is
graphcert.render.html."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphcert.cert.store import is_snapshot, read_document
from graphcert.gate import GateRun, display_path, find_json_files
from graphcert.model import GraphSnapshot, snapshot_from_json
from graphcert.render.dot import snapshot_to_dot
from graphcert.render.graphviz import INSTALL_DOT, dot_path, dot_to_svg, note_missing_dot
from graphcert.render.html import Picture, render_html, workload_of
from graphcert.render.layered import MAX_NODES, layered_svg, node_total


@dataclass(frozen=True)
class ReportPage:
    """The HTML text, and how many certificates and graph snapshots it shows."""

    html: str
    certificates: int
    graphs: int


def report_page(run: GateRun, paths: Sequence[Path], baseline: Path | None) -> ReportPage:
    """The page of `run` (the gate run over `paths`, `baseline` left out of the graphs)."""
    certs = {c.path: run.certificates[c.path] for c in run.report.certificates}
    pictures = _pictures(find_json_files(list(paths), exclude=baseline)[0], run.certificates)
    graphs = sum(len(p.shown) for p in pictures)
    return ReportPage(render_html(run.report, certs, pictures), len(certs), graphs)


def _pictures(files: list[Path], gated: Collection[str] = ()) -> list[Picture]:
    """Every snapshot among `files`, one Picture per distinct topology (its snapshots by
    workload and class), each drawn once. `gated`: the display paths of the certificates
    the gate loaded, which are not snapshots and are not read again."""
    found = []
    for f in files:
        shown = display_path(f)
        if shown in gated:
            continue
        doc = read_document(f)
        if is_snapshot(doc):  # read once: load_snapshot would read and parse it again
            found.append((shown, snapshot_from_json(doc, source=str(f))))
    groups: dict[str, list[tuple[str, GraphSnapshot]]] = {}
    for path, snap in sorted(found, key=lambda i: (workload_of(i[1]), _capacity(i[1]), i[0])):
        groups.setdefault(snap.topology_hash, []).append((path, snap))
    have_dot = dot_path() is not None
    out = [_drawn(tuple(group), have_dot) for group in groups.values()]
    undrawn = sum(p.svg is None for p in out)
    if undrawn:
        note_missing_dot(f"{undrawn} graph(s) of more than {MAX_NODES} nodes are not drawn: "
                         f"Graphviz's `dot` is not installed; install it with {INSTALL_DOT}")
    return out


def _capacity(snap: GraphSnapshot) -> int:
    cap = snap.meta.get("capacity")
    return cap if isinstance(cap, int) else 0


def _drawn(shown: tuple[tuple[str, GraphSnapshot], ...], have_dot: bool) -> Picture:
    """The group's first snapshot drawn by Graphviz, else by the built-in layout where it is
    small enough, else not drawn, with a note that says which and how to get a picture."""
    path, snap = shown[0]
    title = f"{snap.meta.get('name', Path(path).stem)} class {snap.meta.get('capacity', '?')}"
    if have_dot:
        svg = _inline(dot_to_svg(snapshot_to_dot(snap, title)))
        if svg is not None:
            return Picture(shown, svg)
    svg = layered_svg(snap, title)
    if svg is not None:
        why = "is not installed" if not have_dot else "failed"
        return Picture(shown, svg, f"drawn by graphcert's own layout: Graphviz's `dot` {why} "
                                   f"(install it for its layout: {INSTALL_DOT})")
    return Picture(shown, None, f"No picture: {node_total(snap)} nodes are more than the "
                                f"{MAX_NODES} graphcert draws itself; install Graphviz's `dot` "
                                f"({INSTALL_DOT}) and run `graphcert report` again")


def _inline(svg: str | None) -> str | None:
    """Graphviz's SVG without its XML prolog and DOCTYPE, ready to sit inside HTML."""
    if svg is None:
        return None
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else None
