"""The HTML report's section of a profile certificate: per class the figures
`graphcert show` prints, and a timeline of one replay drawn as inline SVG (no script, no
external resource): one row per stream-level branch of the DAG, a bar per timed node at its
median start offset with its median duration, the critical path's bars marked. Pure."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping

from graphcert.cert.kind import KindResult
from graphcert.kinds.profile.result import ProfiledClass, ProfileResult
from graphcert.kinds.profile.views import (
    WHATIF_TITLE,
    class_lines,
    gap_rows,
    kernel_name,
    node_rows,
    ns,
    what_if_rows,
)
from graphcert.profiling import Profile
from graphcert.render.dot import KIND_FILL

TIMELINE_W = 880.0  # the drawing's width in px, the lane labels' column included
_LABEL_W, _ROW_H, _BAR_H, _AXIS_H = 70.0, 22.0, 16.0, 18.0
CRITICAL_STROKE = "#dc2626"  # the critical path's bars: a red outline


def branches(p: Profile) -> dict[int, int]:
    """Each node's row: the branches a stream capture would give the DAG. In topological
    order (by start offset), a node continues the row of a predecessor that is still the
    last node of its row (a predecessor on the critical path first, then the smallest
    index); a node with none (a source, or the second branch of a fork) opens a new row."""
    n = len(p.nodes) + len(p.untimed)
    preds: list[list[int]] = [[] for _ in range(n)]
    for a, b in p.edges:
        preds[b].append(a)
    offset = {node.index: node.start_offset_ns for node in p.nodes}
    on_path = set(p.critical_path)
    order = _order(n, p.edges, offset)
    row: dict[int, int] = {}
    tail: list[int] = []  # per row, its last node
    for v in order:
        free = [u for u in preds[v] if tail[row[u]] == u]
        if free:
            u = min(free, key=lambda u: (u not in on_path, u))
            row[v] = row[u]
            tail[row[v]] = v
        else:
            row[v] = len(tail)
            tail.append(v)
    return row


def _order(n: int, edges: tuple[tuple[int, int], ...], offset: dict[int, float]) -> list[int]:
    """A topological order that takes the earliest-starting ready node first."""
    import heapq

    indegree = [0] * n
    succs: list[list[int]] = [[] for _ in range(n)]
    for a, b in set(edges):
        indegree[b] += 1
        succs[a].append(b)
    ready = [(offset.get(v, 0.0), v) for v in range(n) if indegree[v] == 0]
    heapq.heapify(ready)
    out: list[int] = []
    while ready:
        _, v = heapq.heappop(ready)
        out.append(v)
        for w in succs[v]:
            indegree[w] -= 1
            if indegree[w] == 0:
                heapq.heappush(ready, (offset.get(w, 0.0), w))
    return out


def timeline_svg(c: ProfiledClass) -> str:
    """One replay of the class's graph as inline SVG (see the module's docstring); empty
    for a span-mode class (no per-node figures)."""
    p = c.profile
    if p is None:
        return ""
    row = branches(p)
    rows = max(row.values(), default=0) + 1
    end = max([p.span_ns] + [n.start_offset_ns + n.median_ns for n in p.nodes]) or 1.0
    scale = (TIMELINE_W - _LABEL_W - 10) / end
    height = math.ceil(rows * _ROW_H + _AXIS_H + 4)
    on_path = set(p.critical_path)
    parts = [f"<text x='2' y='{r * _ROW_H + _BAR_H - 3:.1f}'>branch {r}</text>"
             for r in range(rows)]
    for n in p.nodes:
        x = _LABEL_W + n.start_offset_ns * scale
        w = max(n.median_ns * scale, 1.0)
        y = row[n.index] * _ROW_H + 2
        stroke = (f" stroke='{CRITICAL_STROKE}' stroke-width='2' class='critical'"
                  if n.index in on_path else " stroke='#6b7280' stroke-width='0.5'")
        tip = (f"node {n.index} {n.kind.value} {kernel_name(n.name, full=True)}: median "
               f"{n.median_ns / 1e3:.2f} µs at +{n.start_offset_ns / 1e3:.2f} µs"
               + (" (critical path)" if n.index in on_path else ""))
        parts.append(f"<rect x='{x:.1f}' y='{y:.1f}' width='{w:.1f}' height='{_BAR_H:.0f}' "
                     f"fill='{KIND_FILL.get(n.kind, '#f3f4f6')}'{stroke}>"
                     f"<title>{html.escape(tip)}</title></rect>")
        if w > 24:
            parts.append(f"<text x='{x + 3:.1f}' y='{y + _BAR_H - 4:.1f}'>{n.index}</text>")
    axis_y = rows * _ROW_H + _AXIS_H - 4
    parts.append(f"<text x='{_LABEL_W:.0f}' y='{axis_y:.1f}'>0</text>"
                 f"<text x='{TIMELINE_W - 10:.0f}' y='{axis_y:.1f}' text-anchor='end'>"
                 f"{end / 1e3:,.2f} µs</text>")
    title = (f"one replay of {c.label}: {len(p.nodes)} timed nodes on {rows} branch(es), "
             f"critical path outlined in red")
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{TIMELINE_W:.0f}' "
            f"height='{height}' viewBox='0 0 {TIMELINE_W:.0f} {height}' role='img' "
            f"font-family='ui-monospace,Menlo,Consolas,monospace' font-size='11' "
            f"class='timeline'><title>{html.escape(title)}</title>{''.join(parts)}</svg>")


def profile_html(result: ProfileResult) -> str:
    """The HTML report's section of a profile certificate."""
    from graphcert.render.htmlparts import para, table

    out = ["<h3>Profile</h3>",
           para(f"{result.replays} replays per class, CUPTI {result.cupti_version}")]
    for c in result.classes:
        out += [para(f"{k}: {v}") for k, v in class_lines(c)]
        if c.profile is None:  # span mode: no per-node figures to draw
            continue
        out.append(f"<figure>{timeline_svg(c)}</figure>")
        out.append(table(["node", "kind", "kernel", "share", "median [95%]", "min", "max",
                          "start"], node_rows(c, full_names=True), frozenset({0, 3, 4, 5, 6, 7}),
                         wrap=frozenset({2})))
        if c.profile.gaps:
            out.append(table(["edge", "gap", "via"], gap_rows(c), frozenset({1})))
        out += _what_if_html(c)
    out += [para(f"note: {n}") for n in result.notes]
    return "".join(out)


def _what_if_html(c: ProfiledClass) -> list[str]:
    """The what-if table the terminal view prints, with its caption; or why it did not run."""
    from graphcert.render.htmlparts import para, table

    w = c.what_if
    if w is None:
        return [] if c.what_if_reason is None else [para(f"what-if: {c.what_if_reason}")]
    return [para(f"{WHATIF_TITLE}: {w.selection}; replay {ns(w.baseline_ns)} untraced"),
            table(["node", "kernel", "traced median", "contribution [95%]"], what_if_rows(c),
                  frozenset({0, 2, 3}), wrap=frozenset({1}))]


def results_html(result: KindResult, figures: Mapping[str, str]) -> str:
    """The report's section of a profile certificate."""
    assert isinstance(result, ProfileResult)
    return profile_html(result)
