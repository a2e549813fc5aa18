"""The HTML report's view of a record certificate: the summary, the coverage bars and the
tables `graphcert show` prints. Pure."""

from __future__ import annotations

from collections.abc import Mapping

from graphcert.cert.kind import KindResult
from graphcert.kinds.record.result import RecordResult
from graphcert.kinds.record.views import (
    CHURN_COLUMNS,
    EAGER_COLUMNS,
    GRAPH_COLUMNS,
    REGION_COLUMNS,
    record_rows,
    summary_lines,
)
from graphcert.recording import Coverage


def results_html(result: KindResult, figures: Mapping[str, str]) -> str:
    """The report's section of a record certificate."""
    assert isinstance(result, RecordResult)
    return record_html(result)


def coverage_bar(label: str, c: Coverage | None) -> str:
    """An inline SVG bar: the share of kernel launches (and of device time) graphs made."""
    from html import escape

    if c is None or c.fraction is None:
        return ""
    width = 360
    bars = [f'<text x="0" y="12" font-size="11">{escape(label)}</text>']
    for row, (what, share) in enumerate((("launches", c.fraction),
                                         ("device time", c.time_fraction))):
        if share is None:
            continue
        y = 18 + row * 18
        bars += [f'<rect x="80" y="{y}" width="{width}" height="12" fill="#e8a33d"/>',
                 f'<rect x="80" y="{y}" width="{share * width:.1f}" height="12" '
                 'fill="#3d7be8"/>',
                 f'<text x="0" y="{y + 10}" font-size="10">{what}</text>',
                 f'<text x="{86 + width}" y="{y + 10}" font-size="10">{share:.1%} by '
                 'graphs</text>']
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 200}" height="56" '
            f'role="img" aria-label="{escape(label)}">{"".join(bars)}</svg>')


def record_html(r: RecordResult) -> str:
    """The HTML report's section of a record certificate: the same lines and tables, and a
    bar of the coverage overall and in steady state (graph launches blue, eager orange)."""
    from graphcert.render.htmlparts import para, table

    graphs, eager, regions, churn = record_rows(r)
    out = ["<h3>Record</h3>"] + [para(f"{k}: {v}") for k, v in summary_lines(r)]
    out += [coverage_bar("overall", r.recorded.overall),
            coverage_bar("steady state", r.recorded.steady)]
    for title, cols, rows, right in (
            ("graph executables", GRAPH_COLUMNS, graphs, frozenset({0, 3, 4, 5, 6, 7, 8, 9})),
            ("eager kernels in steady state", EAGER_COLUMNS, eager, frozenset({1, 2})),
            ("eager kernels in steady state by NVTX range", REGION_COLUMNS, regions,
             frozenset({1, 2})),
            ("churn", CHURN_COLUMNS, churn, frozenset({2, 3}))):
        if rows:
            out += [para(title), table([c.header for c in cols], rows, right)]
    return "".join(out)
