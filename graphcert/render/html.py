"""The HTML report: one self-contained page (inline CSS and SVG, no script, no network).

Pure: it is handed the gate's report, the typed certificates the gate judged and any
snapshots (with their SVG pictures already drawn), and returns text. `graphcert report`
writes it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphcert._version import __version__
from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import fmt_seconds
from graphcert.cert.results import (
    BenchResult,
    Interval,
    SweepFit,
    Timing,
    Transition,
    VerifyResult,
)
from graphcert.gate import GateReport, RuleStatus
from graphcert.model import GraphSnapshot
from graphcert.model.jsontext import short_hash
from graphcert.render.bench import LABELS, host_cost_line
from graphcert.render.inventory import counts_line
from graphcert.render.report import headline
from graphcert.render.sweep import sweep_svg
from graphcert.render.verify import BUCKET_COLUMNS, bucket_rows

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:2rem;
color:#111827;max-width:1200px}
h1{margin:0 0 .25rem 0}h2{margin-top:2.5rem;border-bottom:1px solid #d1d5db}
.meta{color:#4b5563;font-size:.9rem}
.verdict{display:inline-block;padding:.35rem .9rem;border-radius:.4rem;font-weight:700;
font-size:1.2rem;margin:.75rem 0}
.pass{background:#dcfce7;color:#166534}.fail{background:#fee2e2;color:#991b1b}
.warn{background:#fef9c3;color:#854d0e}
table{border-collapse:collapse;margin:.5rem 0 1rem 0;font-size:.85rem}
th,td{border:1px solid #e5e7eb;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f4f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em}
figure{margin:1rem 0;padding:.5rem;border:1px solid #e5e7eb;border-radius:.4rem;overflow-x:auto}
figcaption{font-size:.85rem;color:#4b5563}
.note{color:#6b7280;font-size:.85rem}
ul.findings li{margin:.2rem 0}
"""


@dataclass(frozen=True)
class Picture:
    """A snapshot to show, with its SVG (None where Graphviz is not installed)."""

    path: str
    snapshot: GraphSnapshot
    svg: str | None


def _e(value: Any) -> str:
    return html.escape("-" if value is None else str(value))


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]],
           numeric: frozenset[int] = frozenset()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            raw = cell if isinstance(cell, _Html) else _e(cell)
            cells.append(f'<td class="num">{raw}</td>' if i in numeric else f"<td>{raw}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


class _Html(str):
    """Already-escaped markup for a table cell."""


def _status(status: str) -> _Html:
    cls = {"pass": "pass", "fail": "fail", "warn": "warn"}.get(status.lower(), "")
    return _Html(f'<span class="verdict {cls}" style="font-size:.8rem;margin:0;'
                 f'padding:.1rem .4rem">{_e(status.upper())}</span>')


def _certificate_table(report: GateReport, certs: Mapping[str, Certificate]) -> str:
    rows = []
    for c in report.certificates:
        cert = certs.get(c.path)
        rules = ", ".join(f"{r.rule.value} {r.status.value}" for r in c.rules)
        rows.append((_status(c.status.value), c.workload, c.kind, c.gpu, rules,
                     cert.created if cert is not None else None,
                     _Html(f"<code>{_e(c.path)}</code>")))
    return _table(("result", "workload", "kind", "GPU", "rules", "created", "file"), rows)


def _findings(report: GateReport) -> str:
    out = []
    for title, items in (("Failures", report.failures()), ("Warnings", report.warnings())):
        if not items:
            continue
        lis = "".join(f"<li><b>{_e(subject)}</b> [{_e(r.rule.value)}]: {_e(r.summary)}"
                      + "".join(f"<br><span class='note'>{_e(d)}</span>" for d in r.details)
                      + "</li>" for subject, r in items)
        out.append(f"<h3>{title}</h3><ul class='findings'>{lis}</ul>")
    return "".join(out)


def _env_line(cert: Certificate) -> str:
    env = cert.environment
    gpu = env.gpu
    return (f"<p class='meta'>{_e(cert.kind)} certificate, {_e(cert.created)}: "
            f"{_e(gpu.name)} (cc {_e(gpu.compute_capability)}), driver "
            f"{_e(env.driver_version)}, CUDA {_e(env.cuda_driver_api)}; "
            f"verdict <b>{'PASS' if cert.recorded_verdict.passed else 'FAIL'}</b></p>")


def _code_hash(value: str | None) -> _Html:
    return _Html(f"<code>{_e(short_hash(value or ''))}</code>")


def _topology(result: VerifyResult) -> str:
    rows = []
    for c in result.classes:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(getattr(c, "counts", {}).items()))
        waste = getattr(c, "padding_waste", {})
        ok = sum(1 for sample in c.samples if sample.ok)
        rows.append((f"{c.capacity:,}", _status(c.status), getattr(c, "node_count", None),
                     counts, _code_hash(getattr(c, "topology_hash", None)),
                     _code_hash(getattr(c, "shape_hash", None)),
                     f"{waste.get('min', '-')}..{waste.get('max', '-')}",
                     f"{ok}/{len(c.samples)}", "; ".join(c.reasons)))
    out = ["<h3>Capacity classes</h3>",
           _table(("capacity", "status", "nodes", "counts", "topology", "shape", "padding",
                   "samples ok", "reason"), rows, frozenset({0, 2}))]
    buckets = bucket_rows(result.classes)
    if buckets:
        out += ["<h3>Buckets (framework step)</h3>",
                _table(BUCKET_COLUMNS, buckets, frozenset({0, 2, 3, 4, 5, 6, 7, 8}))]
    if result.transitions:
        trows = [(f"{a:,}", f"{b:,}", _Html(f"<b>{_e(change)}</b>")
                  if change != "parameters only" else change)
                 for a, b, change in _runs(result.transitions)]
        out += ["<h3>Transitions between classes</h3>",
                _table(("from", "to", "change"), trows, frozenset({0, 1}))]
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


def _median(t: Timing | None) -> str:
    return "-" if t is None else f"{fmt_seconds(t.median_s)} ±{t.noise:.1%}"


def _speedup(iv: Interval | None) -> str:
    return "-" if iv is None else f"{iv.median:.2f}x [{iv.low:.2f}, {iv.high:.2f}]"


def _bench(result: BenchResult) -> str:
    out = ["<h3>Timings</h3>"]
    for s in result.sizes:
        rows = [(label, _median(s.stream.get(q)), _median(s.graph.get(q)),
                 _speedup(s.speedup.get(q))) for q, label in LABELS.items()]
        out.append(f"<p class='meta'>n = {s.n:,} (capacity {s.capacity:,}), "
                   f"{s.node_count} nodes, stream path {_e(s.stream_path)}</p>")
        out.append(_table(("quantity", "stream launch", "graph launch", "speedup [interval]"),
                          rows, frozenset({1, 2, 3})))
        host = host_cost_line(s, result.bare_launch_s)
        if host is not None:
            out.append(f"<p class='meta'>{_e(host)}</p>")
        up = s.upfront
        urow = [fmt_seconds(v) if v is not None else "-"
                for v in (up.capture_s, up.instantiate_s, up.upload_s, up.first_launch_s,
                          up.exec_update_s, up.set_params_s)]
        be = s.break_even_launches
        urow.append("-" if be is None else f"{be:.0f} launches")
        out.append(_table(("capture", "instantiate", "upload", "first launch", "exec update",
                           "set params", "break-even"), [urow], frozenset(range(7))))
    return "".join(out)


def _sweep(fit: SweepFit) -> str:
    """A sweep certificate: cost per launch = a + b·value, per way and quantity."""
    rows = [(way, LABELS[q], _us(f.a_s if f else None), _us(f.b_s if f else None),
             f"{f.r2:.4f}" if f else "-")
            for way in ("stream", "graph") for q in LABELS for f in [fit.fit[way].get(q)]]
    return (f"<h3>Sweep over {_e(fit.key)} = {_e(', '.join(map(str, fit.values)))}</h3>" +
            _table(("way", "quantity", "a (fixed)", f"b (per {fit.key})", "R²"), rows,
                   frozenset({2, 3, 4})))


def _us(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:,.3f} µs"


def _pictures(pictures: Sequence[Picture]) -> str:
    out = []
    for p in sorted(pictures, key=lambda p: (p.snapshot.meta.get("capacity") or 0, p.path)):
        cap = p.snapshot.meta.get("capacity")
        caption = (f"class {cap:,}: " if isinstance(cap, int) else "") + \
            f"{counts_line(p.snapshot)}; topology {short_hash(p.snapshot.topology_hash)}"
        body = p.svg if p.svg is not None else (
            "<p class='note'>No picture: Graphviz's <code>dot</code> is not installed "
            "(<code>apt-get install graphviz</code> or <code>conda install graphviz</code>)."
            "</p>")
        out.append(f"<figure>{body}<figcaption>{_e(caption)} "
                   f"(<code>{_e(p.path)}</code>)</figcaption></figure>")
    return "<h3>Graphs</h3>" + "".join(out) if out else ""


def _results(cert: Certificate) -> str:
    """The section of a certificate's results, by the type of its result."""
    result = cert.result
    if isinstance(result, VerifyResult):
        return _topology(result)
    if isinstance(result, SweepFit):
        return _sweep(result)
    return _bench(result)


def render_html(report: GateReport, certs: Mapping[str, Certificate],
                pictures: Sequence[Picture] = ()) -> str:
    """The whole page. `certs` maps each report path to its typed certificate."""
    status = report.status.value
    by_workload: dict[str, list[tuple[str, Certificate]]] = {}
    for path, cert in sorted(certs.items(), key=lambda i: (i[1].kind != "topology", i[0])):
        by_workload.setdefault(cert.workload.name, []).append((path, cert))
    pics: dict[str, list[Picture]] = {}
    for p in pictures:
        name = p.snapshot.meta.get("name") or p.snapshot.meta.get("workload") or "snapshots"
        pics.setdefault(str(name), []).append(p)
    sections = []
    for name in sorted(set(by_workload) | set(pics)):
        parts = [f"<h2 id='{_e(name)}'>{_e(name)}</h2>"]
        docs = by_workload.get(name, [])
        for _path, cert in docs:
            parts.append(_env_line(cert))
            parts.append(_results(cert))
        sweep = sweep_svg([c for _, c in docs if c.kind == "bench"])
        if sweep:
            parts.append(f"<h3>Sweep</h3><figure>{sweep}</figure>")
        parts.append(_pictures(pics.get(name, [])))
        sections.append("".join(parts))
    verdict_cls = {RuleStatus.PASS.value: "pass", RuleStatus.FAIL.value: "fail"}.get(status, "warn")
    return "\n".join([
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>graphcert report: {_e(status.upper())}</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>graphcert report</h1>",
        f"<p class='meta'>made {_e(report.created)} by graphcert {_e(__version__)}</p>",
        f"<div class='verdict {verdict_cls}'>gate: {_e(status.upper())}</div>",
        f"<p>{_e(headline(report))}</p>",
        _findings(report),
        "<h2>Certificates</h2>", _certificate_table(report, certs),
        *sections,
        "</body></html>", ""])
