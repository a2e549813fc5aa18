"""The HTML report: one self-contained page (inline CSS and SVG, no script, no network).

Pure: it is handed the gate's report, the typed certificates the gate judged and the snapshots
found (grouped by topology, each group's picture already drawn), and returns text. `graphcert
report` writes it. The page opens with the verdict and a table of contents; each workload's
section holds its certificates (what `graphcert show` prints) and its graphs, each distinct
topology drawn once and referred to wherever else it appears.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from graphcert._version import __version__
from graphcert.cert.certificate import Certificate
from graphcert.cert.kind import KindResult
from graphcert.cert.registry import KIND_NAMES, spec, specs
from graphcert.gate import GateReport, RuleStatus
from graphcert.model import GraphSnapshot
from graphcert.model.jsontext import short_hash
from graphcert.render.htmlparts import (
    CSS,
    code,
    cuda_version,
    esc,
    link,
    para,
    slug,
    status,
    table,
    text,
)
from graphcert.render.inventory import counts_line
from graphcert.render.report import headline


@dataclass(frozen=True)
class Picture:
    """One distinct topology among the snapshots found: every (path, snapshot) that has it,
    smallest class first (the one drawn), its SVG (None: not drawn) and a note on how it was
    drawn or why it was not."""

    shown: tuple[tuple[str, GraphSnapshot], ...]
    svg: str | None
    note: str | None = None

    @property
    def topology_hash(self) -> str:
        return self.shown[0][1].topology_hash


def workload_of(snapshot: GraphSnapshot) -> str:
    """The workload a snapshot belongs to, as the page groups it."""
    return str(snapshot.meta.get("name") or snapshot.meta.get("workload") or "snapshots")


def _class_of(snapshot: GraphSnapshot) -> str:
    cap = snapshot.meta.get("capacity")
    return f"class {cap:,}" if isinstance(cap, int) else "a snapshot"


def _certificate_table(report: GateReport, certs: Mapping[str, Certificate],
                       anchors: Mapping[str, str]) -> str:
    """One row per certificate, its file linked to its section; the GPU said once above the
    table where every certificate has the same one (a fleet's table has the column)."""
    gpus = {c.gpu for c in report.certificates}
    one_gpu = len(gpus) == 1
    rows = []
    for c in report.certificates:
        cert = certs.get(c.path)
        rules = ", ".join(f"{r.rule.value} {r.status.value}" for r in c.rules)
        target = anchors.get(c.path)
        row = [status(c.status.value), link(target, code(c.path)) if target else code(c.path),
               c.workload, c.kind, c.gpu, text(rules),
               code(cert.created) if cert is not None else None]
        rows.append(row[:4] + row[5:] if one_gpu else row)
    headers = ["result", "file", "workload", "kind", "GPU", "rules", "created"]
    if one_gpu:
        del headers[4]
    above = para(f"every certificate from one GPU: {next(iter(gpus))}") if one_gpu else ""
    return above + table(headers, rows, wrap=frozenset({headers.index("rules")}))


def _findings(report: GateReport) -> str:
    out = []
    for title, items in (("Failures", report.failures()), ("Warnings", report.warnings())):
        if not items:
            continue
        lis = "".join(f"<li><b>{text(subject)}</b> [{esc(r.rule.value)}]: {text(r.summary)}"
                      + "".join(f"<br><span class='note'>{text(d)}</span>" for d in r.details)
                      + "</li>" for subject, r in items)
        out.append(f"<h3>{title}</h3><ul class='findings'>{lis}</ul>")
    return "".join(out)


def _verdicts(recorded: str, gate: str | None) -> str:
    """A certificate heading's badge: the gate's verdict on it, the one the table and the
    banner give (a recorded PASS the gate failed on a policy rule is not a pass on this
    page); the recorded verdict said beside it, in words, where the two differ."""
    if gate is None or gate == recorded:
        return f" {status(recorded if gate is None else gate)}"
    return f" <span class='note'>recorded {esc(recorded.upper())}, gate</span> {status(gate)}"


def _cert_head(cert: Certificate, path: str, anchor: str, gate: str | None = None) -> str:
    """What, where, when and on what a certificate was made, its verdict (`gate`: the
    gate's on it) and the reasons."""
    env, wl, gpu = cert.environment, cert.workload, cert.environment.gpu
    options = ", ".join(f"{k}={v}" for k, v in sorted(wl.options.items()))
    verdict = cert.recorded_verdict.status.value
    commit = env.git.commit
    facts = [f"{gpu.name} (cc {gpu.compute_capability}"
             + (f", {gpu.sm_count} SMs" if gpu.sm_count else "") + ")",
             f"driver {env.driver_version or '-'}", f"CUDA {cuda_version(env.cuda_driver_api)}",
             f"cuda-bindings {env.cuda_bindings_version or '-'}",
             f"NVRTC {env.nvrtc_version or '-'}"]
    if commit:
        facts.append(f"git {short_hash(commit)}" + (" (dirty)" if env.git.dirty else ""))
    out = [f"<p class='certhead' id='{esc(anchor)}'><b>{esc(cert.kind)} certificate</b> ",
           code(path), f"{_verdicts(verdict, gate)}</p>",
           para("workload ", code(wl.ref), f" ({options})" if options else None,
                "; created ", code(cert.created), f" by graphcert {cert.tool_version}"),
           para("; ".join(facts))]
    if cert.recorded_verdict.reasons:
        out.append("<ul class='reasons'>" + "".join(
            f"<li>{text(r)}</li>" for r in cert.recorded_verdict.reasons) + "</ul>")
    return "".join(out)


class KindHtml(Protocol):
    """A kind's part of the report (graphcert/kinds/<kind>/html.py): `results_html`, and
    optionally `workload_figure(docs)`, a (title, SVG) figure for a workload's section drawn
    from all its certificates (the sweep's chart)."""

    def results_html(self, result: KindResult, figures: Mapping[str, str]) -> str: ...


class WorkloadFigure(Protocol):
    def __call__(self, docs: Sequence[tuple[str, Certificate]]) -> tuple[str, str] | None: ...


def _html_of(kind: str) -> KindHtml:
    return cast(KindHtml, spec(kind).module("html"))


def _results(cert: Certificate, figures: Mapping[str, str] | None = None) -> str:
    """The section of a certificate's results, by its kind; `figures` maps a topology hash
    to the anchor of its picture on the page."""
    return _html_of(cert.kind).results_html(cert.result, figures or {})


def _workload_figures(docs: Sequence[tuple[str, Certificate]]) -> list[str]:
    """The figures the kinds draw from a workload's certificates together (a sweep's chart)."""
    out = []
    for kind in specs():
        draw = getattr(_html_of(kind.name), "workload_figure", None) if kind.has("html") else None
        found = cast(WorkloadFigure, draw)(docs) if draw is not None else None
        if found is not None:
            title, svg = found
            out.append(f"<h3>{esc(title)}</h3><figure>{svg}</figure>")
    return out


def _figure(p: Picture, anchor: str) -> str:
    """One topology's picture, and every snapshot it stands for."""
    (path, first), rest = p.shown[0], p.shown[1:]
    body = p.svg if p.svg is not None else f"<p class='note'>{text(p.note or 'No picture')}</p>"
    also = "".join(
        f"<br>the same topology: {esc(_class_of(s))} ({code(f)})"
        + (", launch shape differs (grid, block or byte counts)"
           if s.shape_hash != first.shape_hash else ", same launch shape")
        for f, s in rest)
    note = f"<br><span class='note'>{text(p.note)}</span>" if p.note and p.svg else ""
    return (f"<figure id='{esc(anchor)}'>{body}<figcaption><b>topology "
            f"{esc(short_hash(p.topology_hash))}</b>: {esc(counts_line(first))}<br>drawn from "
            f"{esc(_class_of(first))} ({code(path)}){also}{note}</figcaption></figure>")


def _graphs(name: str, pictures: Sequence[Picture], anchors: Mapping[str, str],
            section: str) -> str:
    """A workload's graphs: the topologies first seen here drawn, the others referred to."""
    out = []
    for p in pictures:
        mine = [(f, s) for f, s in p.shown if workload_of(s) == name]
        if not mine:
            continue
        anchor = anchors[p.topology_hash]
        if workload_of(p.shown[0][1]) == name:
            out.append(_figure(p, anchor))
        else:
            out += [para(f"{_class_of(s)} (", code(f), "): the same topology as ",
                         link(anchor, f"topology {short_hash(p.topology_hash)}"),
                         ", drawn under ", workload_of(p.shown[0][1])) for f, s in mine]
    return f"<h3 id='{esc(section)}'>Graphs</h3>" + "".join(out) if out else ""


def _toc(entries: Sequence[tuple[str, str, Sequence[tuple[str, str]]]]) -> str:
    """The table of contents: (anchor, title, [(anchor, title) under it])."""
    items = []
    for anchor, title, subs in entries:
        sub = " · ".join(str(link(a, t)) for a, t in subs)
        items.append(f"<li>{link(anchor, title)}"
                     + (f" <span class='sub'>{sub}</span>" if sub else "") + "</li>")
    return f"<nav class='toc'><h2 id='contents'>Contents</h2><ol>{''.join(items)}</ol></nav>"


def _label(cert: Certificate) -> str:
    opts = ", ".join(f"{k}={v}" for k, v in sorted(cert.workload.options.items()))
    return f"{cert.kind} {opts}" if opts else cert.kind


def render_html(report: GateReport, certs: Mapping[str, Certificate],
                pictures: Sequence[Picture] = ()) -> str:
    """The whole page. `certs` maps each report path to its typed certificate; `pictures`
    holds one entry per distinct topology among the snapshots found."""
    taken = {"contents", "certificates", "findings"}
    gate_of = {c.path: c.status.value for c in report.certificates}
    by_workload: dict[str, list[tuple[str, Certificate]]] = {}
    # the first declared kind (topology: what the graphs are) leads each workload's section
    lead = KIND_NAMES[0]
    for path, cert in sorted(certs.items(), key=lambda i: (i[1].kind != lead, i[0])):
        by_workload.setdefault(cert.workload.name, []).append((path, cert))
    cert_anchor = {path: slug(f"cert-{path.rsplit('/', 1)[-1].removesuffix('.json')}", taken)
                   for _, docs in sorted(by_workload.items()) for path, _ in docs}
    figures = {p.topology_hash: slug(f"topology-{short_hash(p.topology_hash)}", taken)
               for p in pictures}
    names = sorted(set(by_workload) | {workload_of(s) for p in pictures for _, s in p.shown})
    sections: list[str] = []
    toc: list[tuple[str, str, Sequence[tuple[str, str]]]] = []
    findings = _findings(report)
    if findings:
        toc.append(("findings", "Failures and warnings", ()))
    toc.append(("certificates", f"Certificates ({len(report.certificates)})", ()))
    for name in names:
        anchor, graphs_at = slug(f"workload-{name}", taken), slug(f"graphs-{name}", taken)
        docs = by_workload.get(name, [])
        parts = [f"<h2 id='{esc(anchor)}'>{esc(name)}</h2>"]
        for path, cert in docs:
            parts += [_cert_head(cert, path, cert_anchor[path], gate_of.get(path)),
                      _results(cert, figures)]
        parts += _workload_figures(docs)
        graphs = _graphs(name, pictures, figures, graphs_at)
        parts.append(graphs)
        subs = [(cert_anchor[p], _label(c)) for p, c in docs]
        toc.append((anchor, name, subs + ([(graphs_at, "graphs")] if graphs else [])))
        sections.append("".join(parts))
    state = report.status.value
    verdict_cls = {RuleStatus.PASS.value: "pass", RuleStatus.FAIL.value: "fail"}.get(state, "warn")
    return "\n".join([
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>graphcert report: {esc(state.upper())}</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>graphcert report</h1>",
        para("made ", code(report.created), f" by graphcert {__version__}"),
        f"<div class='verdict {verdict_cls}'>gate: {esc(state.upper())}</div>",
        para(headline(report), cls="headline"),
        _toc(toc),
        f"<div id='findings'>{findings}</div>" if findings else "",
        "<h2 id='certificates'>Certificates</h2>", _certificate_table(report, certs, cert_anchor),
        *sections,
        "</body></html>", ""])

