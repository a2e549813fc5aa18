"""The HTML report's view of a record certificate: the summary, the coverage bars and the
tables `graphcert show` prints. Pure."""

from __future__ import annotations

from collections.abc import Mapping

from graphcert.cert.kind import KindResult
from graphcert.kinds.record.result import RecordResult
from graphcert.kinds.record.views import (
    CHURN_COLUMNS,
    EAGER_COLUMNS,
    PROCESS_COLUMNS,
    REGION_COLUMNS,
    TOPOLOGY_COLUMNS,
    graph_columns,
    process_rows,
    record_rows,
    summary_lines,
    topology_rows,
)
from graphcert.recording import Coverage
from graphcert.render.layout import Column


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
    for title, cols, rows in (
            ("processes", PROCESS_COLUMNS, process_rows(r)),
            ("topologies across processes", TOPOLOGY_COLUMNS, topology_rows(r)),
            ("graph executables", graph_columns(r), graphs),
            ("eager kernels in steady state", EAGER_COLUMNS, eager),
            ("eager kernels in steady state by NVTX range", REGION_COLUMNS, regions),
            ("churn", CHURN_COLUMNS, churn)):
        if rows:
            out += [para(title), table([c.header for c in cols], rows, _right(cols))]
    return "".join(out)


def _right(cols: tuple[Column, ...]) -> frozenset[int]:
    """The columns drawn right-aligned (numbers), as the terminal table draws them."""
    return frozenset(i for i, c in enumerate(cols) if c.right)
