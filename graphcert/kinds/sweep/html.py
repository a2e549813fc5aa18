"""The HTML report's view of a sweep: its fit and points, and the sweep drawn as inline SVG
(bench certificates of one workload that differ in one numeric option, `bench chain --sweep
kernels=1,10,100`, end-to-end median against that option). Pure; no plotting library, so
the HTML report needs nothing installed."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

from graphcert.cert.certificate import Certificate
from graphcert.cert.kind import KindResult
from graphcert.kinds.bench.result import BenchResult
from graphcert.kinds.bench.views import LABELS
from graphcert.kinds.sweep.result import SweepFit
from graphcert.kinds.sweep.views import PLOT_NOTE
from graphcert.kinds.sweep.views import sweep_points as point_rows
from graphcert.render.htmlparts import code, esc, para, table
from graphcert.render.numbers import us

_W, _H, _L, _R, _T, _B = 640, 320, 70, 20, 34, 50
_COLOURS = {"stream": "#dc2626", "graph": "#2563eb"}


def sweep_points(certs: Sequence[Certificate]
                 ) -> tuple[str, list[tuple[float, float, float]]] | None:
    """(option, [(value, stream e2e s, graph e2e s)]) when the bench certificates form a
    sweep (one numeric option varies), else None."""
    if len(certs) < 2:
        return None
    options = [c.workload.options for c in certs]
    keys: set[str] = set().union(*options)
    varying = [k for k in sorted(keys) if len({repr(o.get(k)) for o in options}) > 1]
    if len(varying) != 1:
        return None
    key = varying[0]
    points = []
    for cert, opts in zip(certs, options, strict=True):
        value, result = opts.get(key), cert.result
        if not isinstance(value, (int, float)) or isinstance(value, bool) or \
                not isinstance(result, BenchResult) or not result.sizes:
            return None
        s = result.sizes[0]
        points.append((float(value), s.stream.end_to_end.median_s,
                       s.graph.end_to_end.median_s))
    return key, sorted(points)


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} µs" if seconds < 1e-3 else f"{seconds * 1e3:.3g} ms"


def sweep_svg(certs: Sequence[Certificate]) -> str | None:
    """The sweep as an SVG line chart (stream and graph launch), or None when no sweep."""
    found = sweep_points(certs)
    if found is None:
        return None
    key, points = found
    xs = [p[0] for p in points]
    ys = [y for p in points for y in p[1:]]
    # values over decades (kernels=1,10,100,1000) go on a log axis, as the --plot image
    # draws them; on a linear one the small values sit on top of each other
    log = min(xs) > 0 and max(xs) / min(xs) >= 20
    scale = (lambda v: math.log10(v)) if log else (lambda v: v)
    x0, x1 = scale(min(xs)), scale(max(xs))
    y1 = max(ys) * 1.05 or 1.0

    def px(x: float) -> float:
        return _L + (scale(x) - x0) / ((x1 - x0) or 1.0) * (_W - _L - _R)

    def py(y: float) -> float:
        return _H - _B - y / y1 * (_H - _T - _B)

    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{_W}' height='{_H}' "
             f"viewBox='0 0 {_W} {_H}' font-family='sans-serif' font-size='11'>",
             f"<line x1='{_L}' y1='{_H - _B}' x2='{_W - _R}' y2='{_H - _B}' stroke='#111'/>",
             f"<line x1='{_L}' y1='{_T}' x2='{_L}' y2='{_H - _B}' stroke='#111'/>",
             f"<text x='{(_W + _L) / 2}' y='{_H - 12}' text-anchor='middle'>"
             f"{html.escape(key)}{' (log scale)' if log else ''}</text>",
             # above the axis, clear of the top tick's label
             f"<text x='{_L}' y='{_T - 14}' text-anchor='middle'>end to end</text>"]
    for frac in (0.0, 0.5, 1.0):
        y = y1 * frac
        parts.append(f"<text x='{_L - 6}' y='{py(y) + 4:.1f}' text-anchor='end'>"
                     f"{html.escape(_fmt(y))}</text>")
    for x in xs:
        parts.append(f"<text x='{px(x):.1f}' y='{_H - _B + 16}' text-anchor='middle'>"
                     f"{x:g}</text>")
    for i, way in enumerate(("stream", "graph"), start=1):
        path = " ".join(f"{px(p[0]):.1f},{py(p[i]):.1f}" for p in points)
        colour = _COLOURS[way]
        parts.append(f"<polyline points='{path}' fill='none' stroke='{colour}' "
                     "stroke-width='2'/>")
        parts += [f"<circle cx='{px(p[0]):.1f}' cy='{py(p[i]):.1f}' r='3' fill='{colour}'/>"
                  for p in points]
        parts.append(f"<text x='{_W - _R - 90}' y='{_T + 14 * i}' fill='{colour}'>"
                     f"{way} launch</text>")
    parts.append("</svg>")
    return "".join(parts)


def results_html(result: KindResult, figures: Mapping[str, str]) -> str:
    """The report's section of a sweep certificate."""
    assert isinstance(result, SweepFit)
    return sweep_view(result)


def sweep_view(fit: SweepFit) -> str:
    """A sweep certificate: cost per launch = a + b·value per way and quantity, then each
    swept run's per-launch medians and its certificate."""
    rows = [(way, LABELS[q], us(f.a_s if f else None), us(f.b_s if f else None),
             f"{f.r2:.4f}" if f else "-")
            for way in ("stream", "graph") for q in LABELS for f in [fit.fit[way].get(q)]]
    out = [f"<h3>Sweep over {esc(fit.key)} = {esc(', '.join(map(str, fit.values)))}</h3>",
           table(("way", "quantity", "a (fixed)", f"b (× {fit.key})", "R²"), rows,
                 frozenset({2, 3, 4}))]
    points = [(*figures, code(name) if name else "-") for figures, name in point_rows(fit)]
    if points:
        out.append(table((fit.key, "stream e2e / kernel", "graph e2e / kernel",
                          "graph device / node", "certificate"), points, frozenset({0, 1, 2, 3})))
    if fit.plot:
        out.append(para("plot: ", code(fit.plot), f" ({PLOT_NOTE})"))
    return "".join(out)


def workload_figure(docs: Sequence[tuple[str, Certificate]]) -> tuple[str, str] | None:
    """("Sweep", the chart) for a workload's section of the report: from the bench
    certificates a sweep certificate names, else from all the workload's bench certificates
    where they differ in one numeric option; None where there is no sweep to draw."""
    benches = [(path.rsplit("/", 1)[-1], c) for path, c in docs
               if isinstance(c.result, BenchResult)]
    picture = None
    for _, cert in docs:
        if isinstance(cert.result, SweepFit):
            named = set(cert.result.certificates)
            picture = sweep_svg([c for name, c in benches if name in named])
            if picture:
                break
    picture = picture or sweep_svg([c for _, c in benches])
    return ("Sweep", picture) if picture else None
