"""The HTML report's view of a bench certificate: per size each timing with its precision,
how its sampling ended, its sample count and placement spread, the hot row; up-front costs;
how the run went. Every time in µs. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from graphcert.cert.kind import KindResult
from graphcert.cert.results.figures import Ended, Interval, Timing
from graphcert.kinds.bench.result import BenchResult, SizeResult
from graphcert.kinds.bench.views import LABELS, clock_line, host_cost_line, run_lines
from graphcert.render.htmlparts import Cell, Html, esc, para, table, timeout_mark
from graphcert.render.numbers import us


def results_html(result: KindResult, figures: Mapping[str, str]) -> str:
    """The report's section of a bench certificate."""
    assert isinstance(result, BenchResult)
    return bench_view(result)


def precision(t: Timing | None) -> Html:
    """± the half-width of the median's 95% interval (a figure recorded without one: its
    relative stddev, "sd"), marked where sampling ended on its timeout."""
    if t is None:
        return Html("-")
    figure = f"±{t.half_width:.2%}" if t.half_width is not None else f"{t.noise:.2%} sd"
    return Html(esc(figure) + (" " + timeout_mark() if t.ended is Ended.TIMEOUT else ""))


def _median(t: Timing | None) -> str:
    return us(t.median_s) if t is not None else "unavailable"


def _speedup(iv: Interval | None) -> str:
    return "unavailable" if iv is None else f"{iv.median:.2f}× [{iv.low:.2f}, {iv.high:.2f}]"


def _spread(row: SizeResult, quantity: str) -> str:
    """(max - min) / median of the per-placement medians, stream/graph; '-' with one."""
    def one(side: str) -> str:
        p = (row.placements or {}).get(side, {}).get(quantity)
        return f"{p.rel_range:.1%}" if p is not None and len(p.medians_s) > 1 else "-"

    return f"{one('stream')} / {one('graph')}"


def _samples(s: Timing | None, g: Timing | None) -> str:
    return f"{s.samples if s else 0:,} / {g.samples if g else 0:,}"


_TIMING_COLUMNS = ("quantity", "stream median", "stream ±95%", "graph median", "graph ±95%",
                   "speedup (95% CI)", "samples s/g", "placement spread s/g")


def _size(row: SizeResult, bare_s: float | None) -> str:
    """One size: what it ran, then each quantity's row and the hot row apart."""
    places = row.placements
    count = max((len(p.medians_s) for side in (places or {}).values() for p in side.values()),
                default=1)
    ctx = row.contexts
    head = [f"n = {row.n:,} (capacity {row.capacity:,}), {row.node_count} "
            f"node{'s' * (row.node_count != 1)}, stream path "
            f"{row.stream_path or '-'}, {count} placement{'s' * (count != 1)}"
            + (f" in {ctx.count} context{'s' * (ctx.count != 1)}" if ctx else "")]
    if row.throttled:
        head.append(Html(" <b class='failtext'>THROTTLED</b>"))
    rows: list[Sequence[Cell]] = []
    for q, label in LABELS.items():
        s, g = row.stream.get(q), row.graph.get(q)
        rows.append((label, _median(s), precision(s), _median(g), precision(g),
                     _speedup(row.speedup.get(q)), _samples(s, g), _spread(row, q)))
    classes = [""] * len(rows)
    if row.hot is not None:  # the hot regime in its own row, after the cold figures
        s, g = row.hot.get("stream"), row.hot.get("graph")
        ratio = f"{s.median_s / g.median_s:.2f}× (medians)" if s and g and g.median_s else "-"
        rows.append(("device hot (L2 warm, per launch)", _median(s), precision(s), _median(g),
                     precision(g), ratio, _samples(s, g), _spread(row, "hot_device")))
        classes.append("hot")
    body = table(_TIMING_COLUMNS, rows, frozenset(range(1, 8)), wrap=frozenset({0}),
                 row_class=classes)
    out = [para(*head), body]
    if ctx and ctx.kept:
        out.append(para(f"one context: {ctx.kept}", cls="note"))
    host = host_cost_line(row, bare_s)
    if host is not None:
        out.append(para(host))
    return "".join(out)


def _upfront(sizes: Sequence[SizeResult]) -> str:
    """What the graph costs before it pays, per size, and the break-even launch count."""
    rows = [(f"{r.n:,}", us(u.capture_s), us(u.instantiate_s), us(u.upload_s),
             us(u.first_launch_s), us(u.exec_update_s), us(u.set_params_s),
             f"{r.break_even_launches:,.0f}" if r.break_even_launches is not None else "never")
            for r in sizes for u in [r.upfront]]
    return ("<h4>Up-front costs</h4>" +
            table(("n", "capture", "instantiate", "upload", "first launch", "exec update",
                   "set params", "break-even launches"), rows, frozenset(range(8))))


def bench_view(result: BenchResult) -> str:
    """Every size's timings, the up-front costs, how the run went, the SM clock; with
    --context both, the other driver state's run after it, apart."""
    out = ["<h3>Timings</h3>"]
    out += [_size(row, result.bare_launch_s) for row in result.sizes]
    out.append(_upfront(result.sizes))
    out += [para(line) for line in run_lines(result)]
    clock = clock_line(result)
    if clock is not None:
        out.append(para(clock))
    other = result.other_context
    if other is not None:
        label = other.context.label if other.context is not None else "other state"
        out.append(f"<h4>The same workload in the {esc(label)}</h4>")
        out.append(bench_view(other))
    return "".join(out)
