"""The pieces the HTML report is built of: escaped text whose paths, timestamps and hashes never
break across lines, table cells, tables that scroll sideways rather than squeeze, anchors.
Pure."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

# A token a browser would break at its hyphens or slashes (paths, timestamps, GPU UUIDs,
# "1..1023"): kept on one line, since half a path or a date is no use to a reader.
_WHOLE = re.compile(r"\S*[-/.:_]\S+")  # not a word that merely ends a sentence or clause


class Html(str):
    """Already-escaped markup (a table cell, a paragraph's part)."""


Cell = str | int | float | Html | None


def esc(value: object) -> str:
    """The value as escaped text; None as "-"."""
    return html.escape("-" if value is None else str(value))


def text(value: object) -> Html:
    """Free text, escaped, that wraps between words but never inside a path, timestamp,
    hash or number range; `quoted` commands (as messages write them) in monospace."""
    parts = esc(value).split("`")
    return Html("".join(  # odd parts were inside backticks
        f"<code>{part}</code>" if i % 2 else
        _WHOLE.sub(lambda m: f"<span class='nw'>{m.group(0)}</span>", part)
        for i, part in enumerate(parts)))


def code(value: object) -> Html:
    """A path, hash or name in monospace, on one line."""
    return Html(f"<code>{esc(value)}</code>")


def link(anchor: str, inner: Html | str) -> Html:
    """A link to an anchor on the page."""
    body = inner if isinstance(inner, Html) else esc(inner)
    return Html(f"<a href='#{esc(anchor)}'>{body}</a>")


def status(value: str) -> Html:
    """A verdict or rule status as a small coloured badge."""
    cls = {"pass": "pass", "fail": "fail", "warn": "warn"}.get(value.lower(), "other")
    return Html(f"<span class='badge {cls}'>{esc(value.upper())}</span>")


def timeout_mark() -> Html:
    """What marks a figure whose sampling ended on its timeout, short of its target."""
    return Html("<span class='timeout' title='sampling ended on its timeout, short of its "
                "precision target'>(timeout)</span>")


def cell(value: Cell) -> str:
    return value if isinstance(value, Html) else esc(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Cell]],
          numeric: frozenset[int] = frozenset(), wrap: frozenset[int] = frozenset(),
          row_class: Sequence[str] = ()) -> str:
    """A table in a box that scrolls sideways when the page is narrower than it. Cells stay
    on one line except the columns in `wrap` (free text such as reasons); `row_class` names
    a class per row ("" for none)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for n, row in enumerate(rows):
        cells = []
        for i, value in enumerate(row):
            cls = " ".join(c for c, on in (("num", i in numeric), ("wrap", i in wrap)) if on)
            attr = f" class='{cls}'" if cls else ""
            cells.append(f"<td{attr}>{cell(value)}</td>")
        tr = row_class[n] if n < len(row_class) else ""
        body.append((f"<tr class='{tr}'>" if tr else "<tr>") + "".join(cells) + "</tr>")
    return (f"<div class='scroll'><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")


def para(*parts: Cell, cls: str = "meta") -> str:
    """A paragraph of parts (plain values are escaped as free text)."""
    inner = "".join(p if isinstance(p, Html) else text(p) for p in parts if p is not None)
    return f"<p class='{cls}'>{inner}</p>"


def slug(name: str, taken: set[str]) -> str:
    """An id for `name` that is valid in HTML and unique on the page (`taken` grows)."""
    base = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "section"
    out, k = base, 2
    while out in taken:
        out, k = f"{base}-{k}", k + 1
    taken.add(out)
    return out


def cuda_version(api: int | None) -> str:
    """The driver API's version number as CUDA names it: 13000 -> "13.0", 12040 -> "12.4"."""
    return "-" if api is None else f"{api // 1000}.{api % 1000 // 10}"


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:2rem;
color:#111827;max-width:1400px}
h1{margin:0 0 .25rem 0}h2{margin-top:2.5rem;border-bottom:1px solid #d1d5db}
h3{margin-bottom:.3rem}h4{margin:.8rem 0 .2rem 0;font-size:.95rem}
a{color:#1d4ed8;text-decoration:none}a:hover{text-decoration:underline}
.meta{color:#4b5563;font-size:.9rem;margin:.3rem 0}
.verdict{display:inline-block;padding:.35rem .9rem;border-radius:.4rem;font-weight:700;
font-size:1.2rem;margin:.75rem 0}
.badge{display:inline-block;padding:.1rem .4rem;border-radius:.3rem;font-weight:700;
font-size:.75rem}
.pass{background:#dcfce7;color:#166534}.fail{background:#fee2e2;color:#991b1b}
.warn,.other{background:#fef9c3;color:#854d0e}
.failtext{color:#b91c1c}
.timeout{color:#b45309;font-weight:600}
.scroll{overflow-x:auto;max-width:100%;margin:.4rem 0 1rem 0}
table{border-collapse:collapse;font-size:.85rem}
th,td{border:1px solid #e5e7eb;padding:.25rem .5rem;text-align:left;vertical-align:top;
white-space:nowrap}
td.wrap{white-space:normal;min-width:10rem}
th{background:#f3f4f6;white-space:normal;vertical-align:bottom}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.hot td{background:#f8fafc;border-top:2px solid #d1d5db}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em;white-space:nowrap}
.nw{white-space:nowrap}
nav.toc{border:1px solid #e5e7eb;border-radius:.4rem;padding:.5rem 1rem;margin:1rem 0;
background:#fafafa;font-size:.9rem}
nav.toc h2{margin:.2rem 0 .4rem 0;border:none;font-size:1.1rem}
nav.toc ol{margin:0;padding-left:1.4rem;columns:2 18rem}nav.toc li{margin:.1rem 0}
nav.toc .sub{color:#6b7280;font-size:.85em}
figure{margin:1rem 0;padding:.5rem;border:1px solid #e5e7eb;border-radius:.4rem;
overflow-x:auto}
figcaption{font-size:.85rem;color:#4b5563;margin-top:.3rem}
.note{color:#6b7280;font-size:.85rem}
ul.findings li,ul.reasons li{margin:.2rem 0;overflow-wrap:anywhere}
"""
