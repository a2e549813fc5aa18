"""The HTML report's view of one certificate's results, by kind: the same facts `graphcert show`
prints (classes and their checks, transitions, buckets; per size each timing with its precision,
how its sampling ended, its sample count and placement spread, the hot row; up-front costs; the
sweep's fit and points), every time in µs. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from graphcert.cert.results import (
    BenchResult,
    ClassResult,
    Ended,
    Interval,
    SampleResult,
    SizeResult,
    SweepFit,
    Timing,
    Transition,
    VerifyResult,
)
from graphcert.model.jsontext import short_hash
from graphcert.render.bench import LABELS, clock_line, host_cost_line, run_lines, sweep_points, us
from graphcert.render.htmlparts import (
    Cell,
    Html,
    code,
    esc,
    link,
    para,
    status,
    table,
    timeout_mark,
)
from graphcert.render.verify import BUCKET_COLUMNS, bucket_rows

# The checks made at each sampled size, as `show` titles its columns.
_CHECKS = (("topology_equal", "same topology"), ("shape_equal", "same shape"),
           ("output_equal", "output"), ("param_update_output_equal", "param update"))


def _checks(samples: Sequence[SampleResult]) -> Html:
    """The checks made at every sampled size in one cell: "all yes", or each check that
    failed at some size, in red ("-": none was reached)."""
    failed, reached = [], False
    for attr, label in _CHECKS:
        seen = [v for v in (getattr(x, attr) for x in samples) if v is not None]
        reached = reached or bool(seen)
        if not all(seen):
            failed.append(label)
    if failed:
        return Html("<b class='failtext'>NO: " + esc(", ".join(failed)) + "</b>")
    return Html("all yes" if reached else "-")


def _update(samples: Sequence[SampleResult]) -> str:
    results = sorted({s.update.result for s in samples if s.update})
    return "ok" if results == ["success"] else ", ".join(results) or "-"


def _hash(value: str | None, figures: Mapping[str, str]) -> Html:
    """A short hash; a topology that is drawn on the page links to its picture."""
    if not value:
        return Html("-")
    anchor = figures.get(value)
    return link(anchor, code(short_hash(value))) if anchor else code(short_hash(value))


def topology_view(result: VerifyResult, figures: Mapping[str, str]) -> str:
    """Classes with their checks, buckets of a framework step, transitions, the run's time."""
    rows: list[list[Cell]] = []
    for c in result.classes:
        predicted = sum(c.predicted.values()) if c.predicted else None
        row: list[Cell] = [f"{c.capacity:,}", status(c.status)]
        if isinstance(c, ClassResult):
            s, w = c.samples, c.padding_waste
            row += [c.node_count, predicted, ", ".join(f"{k} {v}" for k, v in
                                                       sorted(c.counts.items())) or "-",
                    _hash(c.topology_hash, figures), _hash(c.shape_hash, figures={}),
                    ", ".join(str(x.n) for x in s) or "-", _checks(s), _update(s),
                    f"{w['min']:,}..{w['max']:,}" if "min" in w and "max" in w else "-"]
        else:
            row += ["-", predicted, *["-"] * 7]
        rows.append([*row, "; ".join(c.reasons)])
    headers = ("class", "status", "nodes", "predicted", "counts", "topology", "shape",
               "sampled n", "checks", "update", "padding waste", "reason")
    out = ["<h3>Capacity classes</h3>",
           table(headers, rows, frozenset({0, 2, 3}), wrap=frozenset({len(headers) - 1})),
           para("checks: " + ", ".join(label for _, label in _CHECKS) + " at every sampled n; "
                "update: the exec update's result", cls="note")]
    buckets = bucket_rows(result.classes)
    if buckets:
        out += ["<h3>Buckets (framework step)</h3>",
                table([h.replace(" us", " µs") for h in BUCKET_COLUMNS], buckets,
                      frozenset({0, 2, 3, 4, 5, 6, 7, 8}))]
    if result.transitions:
        trows = [(f"{a:,}", f"{b:,}", Html(f"<b>{esc(change)}</b>") if change == "topology"
                  else change, "re-capture" if change == "topology" else "update in place")
                 for a, b, change in _runs(result.transitions)]
        out += ["<h3>Transitions between classes</h3>",
                table(("from", "to", "change", "in place?"), trows, frozenset({0, 1}))]
    if result.timings_s:
        total = sum(result.timings_s.values())
        spent = ", ".join(f"{k} {v:.3f} s" for k, v in result.timings_s.items())
        out.append(para(f"time: {spent}; total {total:.3f} s"))
    return "".join(out)


def _runs(transitions: Sequence[Transition]) -> list[tuple[int, int, str]]:
    """Consecutive transitions with the same change as one row: (first, last, change)."""
    rows: list[tuple[int, int, str]] = []
    for t in transitions:
        if rows and rows[-1][2] == t.change and rows[-1][1] == t.frm:
            rows[-1] = (rows[-1][0], t.to, t.change)
        else:
            rows.append((t.frm, t.to, t.change))
    return rows


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


def sweep_view(fit: SweepFit) -> str:
    """A sweep certificate: cost per launch = a + b·value per way and quantity, then each
    swept run's per-launch medians and its certificate."""
    rows = [(way, LABELS[q], us(f.a_s if f else None), us(f.b_s if f else None),
             f"{f.r2:.4f}" if f else "-")
            for way in ("stream", "graph") for q in LABELS for f in [fit.fit[way].get(q)]]
    out = [f"<h3>Sweep over {esc(fit.key)} = {esc(', '.join(map(str, fit.values)))}</h3>",
           table(("way", "quantity", "a (fixed)", f"b (× {fit.key})", "R²"), rows,
                 frozenset({2, 3, 4}))]
    points = [(*figures, code(name) if name else "-") for figures, name in sweep_points(fit)]
    if points:
        out.append(table((fit.key, "stream e2e / kernel", "graph e2e / kernel",
                          "graph device / node", "certificate"), points, frozenset({0, 1, 2, 3})))
    if fit.plot:
        out.append(para("plot: ", code(fit.plot)))
    return "".join(out)
