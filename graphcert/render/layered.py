"""A small graph drawn as SVG without Graphviz: longest-path layers top to bottom, each node a
labelled box coloured by kind, each dependency a line with an arrowhead; a child graph or
conditional body is laid out the same way inside its owner's box. Pure Python, no dependency:
the HTML report uses it where Graphviz's `dot` is not installed, for graphs small enough to
read (MAX_NODES); a larger one gets a note saying how to get a picture."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from graphcert.model import GraphSnapshot, NodeKind, NodeRecord
from graphcert.render.dot import KIND_FILL
from graphcert.render.inventory import format_dim, operation

MAX_NODES = 60  # past this a layered drawing without edge routing is a tangle
_CHAR_W, _LINE_H, _PAD = 6.6, 13.0, 6.0  # 11px monospace: its advance width and line height
_GAP_X, _GAP_Y, _MAX_CHARS = 14.0, 24.0, 56


@dataclass(frozen=True)
class _Box:
    """A laid-out piece, drawn with its top-left corner at (0, 0)."""

    w: float
    h: float
    svg: str


def node_total(snapshot: GraphSnapshot) -> int:
    """Every node, those inside child graphs and conditional bodies included."""
    return sum(snapshot.counts(recursive=True).values())


def _pieces(text: str) -> list[str]:
    """`text` in lines of at most _MAX_CHARS, never cut: a kernel's name is what tells one
    box from the next (cuBLAS's `nvjet_sm90_hsh_64x8_64x16_2x4_h_bz_...` differ at the end),
    so a long line goes on, at a space where there is one, on the lines below."""
    out: list[str] = []
    while len(text) > _MAX_CHARS:
        cut = text.rfind(" ", 1, _MAX_CHARS + 1)
        cut = cut if cut > 0 else _MAX_CHARS
        out.append(text[:cut])
        text = text[cut:].lstrip(" ")
    return [*out, text]


def _lines(label: str, node: NodeRecord) -> list[str]:
    lines = _pieces(f"{label} {operation(node)}")
    if node.kind is NodeKind.KERNEL:
        lines.append(f"grid {format_dim(node.attrs.get('grid'))} "
                     f"block {format_dim(node.attrs.get('block'))}")
    return lines


def _text(lines: list[str], x: float, y: float) -> str:
    spans = "".join(f"<tspan x='{x:.1f}' y='{y + (i + 1) * _LINE_H - 3:.1f}'>"
                    f"{html.escape(line)}</tspan>" for i, line in enumerate(lines))
    return f"<text>{spans}</text>"


def _node_box(label: str, node: NodeRecord) -> _Box:
    """A node's box: its label, and inside it any child graph or bodies, side by side."""
    lines = _lines(label, node)
    head_h = len(lines) * _LINE_H + 2 * _PAD
    inner = [_graph_box(child, f"{label}." if node.kind is NodeKind.GRAPH else f"{label}[{j}].")
             for j, child in enumerate(node.children)]
    text_w = max(len(line) for line in lines) * _CHAR_W + 2 * _PAD
    inner_w = sum(b.w for b in inner) + _GAP_X * max(len(inner) - 1, 0) + 2 * _PAD
    w = max(text_w, inner_w if inner else 0.0)
    h = head_h + (max(b.h for b in inner) + _PAD if inner else 0.0)
    fill = KIND_FILL.get(node.kind, "#f3f4f6")
    full = html.escape("\n".join(lines))
    parts = [f"<g><title>{full}</title>",
             f"<rect width='{w:.1f}' height='{h:.1f}' rx='4' fill='{fill}' stroke='#6b7280'/>",
             _text(lines, _PAD, _PAD)]
    x = _PAD
    for box in inner:
        parts.append(f"<g transform='translate({x:.1f},{head_h:.1f})'>"
                     f"<rect width='{box.w:.1f}' height='{box.h:.1f}' fill='#ffffff' "
                     f"fill-opacity='.6' stroke='#9ca3af' stroke-dasharray='4 3'/>"
                     f"{box.svg}</g>")
        x += box.w + _GAP_X
    parts.append("</g>")
    return _Box(w, h, "".join(parts))


def layers(snapshot: GraphSnapshot) -> list[list[int]]:
    """Node indices by longest-path layer (a node sits one below its deepest dependency),
    each layer ordered to keep edges short: by the mean position of its dependencies."""
    by_index = {n.index: n for n in snapshot.nodes}
    waiting = {n.index: [d for d in n.deps if d in by_index] for n in snapshot.nodes}
    depth: dict[int, int] = {}
    while waiting:  # Kahn's order, without recursion: deep chains are fine
        ready = [i for i, deps in waiting.items() if all(d in depth for d in deps)]
        if not ready:  # a cycle (a CUDA graph has none): what is left goes on top
            depth.update({i: 0 for i in waiting})
            break
        for i in ready:
            depth[i] = 1 + max((depth[d] for d in waiting.pop(i)), default=-1)
    out: list[list[int]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for n in snapshot.nodes:
        out[depth[n.index]].append(n.index)
    place: dict[int, float] = {i: float(p) for i, p in enumerate(out[0])} if out else {}
    for k in range(1, len(out)):
        def centre(i: int) -> tuple[float, int]:
            ds = [place[d] for d in by_index[i].deps if d in place]
            return (sum(ds) / len(ds) if ds else math.inf, i)
        out[k].sort(key=centre)
        place.update({i: float(p) for p, i in enumerate(out[k])})
    return out


def _arrow(x1: float, y1: float, x2: float, y2: float) -> str:
    """A dependency: a line from the bottom of one box to the top of the next, and its head."""
    angle = math.atan2(y2 - y1, x2 - x1)
    head = [(x2, y2)] + [(x2 - 7 * math.cos(angle + s), y2 - 7 * math.sin(angle + s))
                         for s in (0.4, -0.4)]
    points = " ".join(f"{x:.1f},{y:.1f}" for x, y in head)
    return (f"<line x1='{x1:.1f}' y1='{y1:.1f}' x2='{x2:.1f}' y2='{y2:.1f}' "
            f"stroke='#4b5563'/><polygon points='{points}' fill='#4b5563'/>")


def _graph_box(snapshot: GraphSnapshot, prefix: str) -> _Box:
    """The whole graph laid out: each layer's boxes centred in a row, rows top to bottom."""
    boxes = {n.index: _node_box(f"{prefix}{n.index}", n) for n in snapshot.nodes}
    rows = layers(snapshot)
    row_w = [sum(boxes[i].w for i in row) + _GAP_X * (len(row) - 1) for row in rows]
    width = max(row_w, default=0.0) + 2 * _PAD
    at: dict[int, tuple[float, float]] = {}
    y = _PAD
    for row, w in zip(rows, row_w, strict=True):
        x = (width - w) / 2
        for i in row:
            at[i] = (x, y)
            x += boxes[i].w + _GAP_X
        y += max(boxes[i].h for i in row) + _GAP_Y
    height = y - _GAP_Y + _PAD if rows else 2 * _PAD
    parts = []
    for n in snapshot.nodes:  # lines first, so boxes sit on top of them
        x2, y2 = at[n.index]
        for d in n.deps:
            if d in at:
                x1, y1 = at[d]
                parts.append(_arrow(x1 + boxes[d].w / 2, y1 + boxes[d].h,
                                    x2 + boxes[n.index].w / 2, y2))
    for i, (x, y0) in sorted(at.items()):
        parts.append(f"<g transform='translate({x:.1f},{y0:.1f})'>{boxes[i].svg}</g>")
    return _Box(width, height, "".join(parts))


def layered_svg(snapshot: GraphSnapshot, title: str) -> str | None:
    """The snapshot as inline SVG, or None when it has more than MAX_NODES nodes."""
    if node_total(snapshot) > MAX_NODES:
        return None
    box = _graph_box(snapshot, "")
    w, h = math.ceil(box.w), math.ceil(box.h)
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' "
            f"viewBox='0 0 {w} {h}' role='img' font-family='ui-monospace,Menlo,Consolas,"
            f"monospace' font-size='11' class='layered'><title>{html.escape(title)}</title>"
            f"{box.svg}</svg>")
