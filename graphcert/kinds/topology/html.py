"""The HTML report's view of a topology certificate: the same facts `graphcert show` prints
(classes and their checks, transitions, buckets). Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from graphcert.cert.kind import KindResult
from graphcert.kinds.topology.result import ClassResult, SampleResult, Transition, VerifyResult
from graphcert.kinds.topology.views import BUCKET_COLUMNS, bucket_rows
from graphcert.model.jsontext import short_hash
from graphcert.render.htmlparts import Cell, Html, code, esc, link, para, status, table


def results_html(result: KindResult, figures: Mapping[str, str]) -> str:
    """The report's section of a topology certificate; `figures` maps a topology hash to the
    anchor of its picture on the page."""
    assert isinstance(result, VerifyResult)
    return topology_view(result, figures)


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
