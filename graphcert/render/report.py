"""The gate report as a rich table, JSON, JUnit XML or markdown. Pure; deterministic given
the report (its `created` is the only clock), so the outputs are golden-tested."""

from __future__ import annotations

import io
import json
import posixpath
from enum import Enum
from typing import TYPE_CHECKING, NoReturn

from rich.cells import cell_len

from graphcert.gate import CertificateResult, GateReport, RuleResult, RuleStatus, UnusableReport
from graphcert.render.layout import Column, Grid
from graphcert.render.sanitize import clean_value

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

    from rich.console import Console, RenderableType


class OutputFormat(Enum):
    """Every format the gate report renders to."""

    TABLE = "table"
    JSON = "json"
    JUNIT = "junit"
    MARKDOWN = "markdown"


def assert_never(value: NoReturn) -> NoReturn:
    """mypy proves a match over OutputFormat exhaustive; this fires if it ever is not."""
    raise AssertionError(f"unhandled output format {value!r}")


def render(report: GateReport | UnusableReport, fmt: OutputFormat, *, width: int = 100) -> str:
    """The report as text in `fmt` (TABLE without colour, at `width` columns)."""
    report = clean_value(report)  # strings from certificates never reach a terminal raw
    if isinstance(report, UnusableReport):
        return render_unusable(report, fmt)
    if fmt is OutputFormat.TABLE:
        return render_table_text(report, width=width)
    if fmt is OutputFormat.JSON:
        return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if fmt is OutputFormat.JUNIT:
        return render_junit(report)
    if fmt is OutputFormat.MARKDOWN:
        return render_markdown(report)
    assert_never(fmt)


# ----------------------------------------------------------------------------------- table

_STYLE = {RuleStatus.PASS: "green", RuleStatus.WARN: "yellow", RuleStatus.FAIL: "bold red"}


def _rules_cell(cert: CertificateResult) -> str:
    return ", ".join(f"{r.rule.value} {r.status.value}" for r in cert.rules)


def headline(report: GateReport) -> str:
    """The gate's one-line verdict: counts, failed set rules, policy, baseline."""
    n = len(report.certificates)
    failed = sum(1 for c in report.certificates if c.status is RuleStatus.FAIL)
    text = (f"graphcert gate: {report.status.value.upper()}: {n} certificate"
            f"{'s' if n != 1 else ''}, {failed} failed")
    # Rules over the whole set (require, baseline coverage) can fail with every certificate
    # passing: name them, so the headline never reads "FAIL: ..., 0 failed" unexplained.
    set_failed = [r.rule.value for r in report.checks if r.status is RuleStatus.FAIL]
    if set_failed:
        text += f", set rule{'s' if len(set_failed) != 1 else ''} failed: {', '.join(set_failed)}"
    text += f"; policy: {report.policy.source}"
    if report.baseline is not None:
        text += f"; baseline: {report.baseline}"
    if report.skipped_snapshots:
        text += f"; {report.skipped_snapshots} snapshot(s) not gated"
    return text


# The gate's table: a row is named by its result and workload; its file moves under the row
# first when the terminal is narrow (render/layout.py), then the wider columns.
GATE_COLUMNS = (Column("result", key=True), Column("workload", key=True), Column("kind"),
                Column("gpu"), Column("rules", wrap=True, sep=", "), Column("file"))


def _files(report: GateReport, width: int | None) -> tuple[str | None, list[str]]:
    """(the folder the files are shown relative to, or None; each certificate's file as
    shown). On a terminal too narrow for a path, the paths are shown relative to the folder
    they share, named once above the table: a path wider than the terminal would be folded
    mid-name by the terminal itself, and a folded path can neither be read nor copied."""
    paths = [c.path for c in report.certificates]
    if width is None or all(cell_len(p) <= width for p in paths):
        return None, paths
    folders = [posixpath.dirname(p) for p in paths]
    common = posixpath.commonpath(folders) if all(folders) and len(
        {f.startswith("/") for f in folders}) == 1 else ""
    if not common:
        return None, paths
    return common, [posixpath.relpath(p, common) for p in paths]


def table_renderables(report: GateReport, width: int | None = None) -> list[RenderableType]:
    """The headline, the table of certificates, and the failures and warnings below it
    (`width`: the terminal's columns, None when the output is not laid out for one)."""
    from rich.text import Text

    folder, files = _files(report, width)
    table = Grid(GATE_COLUMNS, [
        (Text(cert.status.value.upper(), style=_STYLE[cert.status]), cert.workload,
         cert.kind, cert.gpu, _rules_cell(cert), file)
        for cert, file in zip(report.certificates, files, strict=True)], rule=False)
    out: list[RenderableType] = [Text(headline(report), style="bold")]
    if folder is not None:
        out.append(Text(f"files in {folder}/", style="bold"))
    out.append(table)
    for r in report.checks:  # failures and warnings are listed below with their details
        if r.status is RuleStatus.PASS:
            out.append(Text(f"policy {r.rule.value}: PASS: {r.summary}", style=_STYLE[r.status]))
    for title, items in (("failures", report.failures()), ("warnings", report.warnings())):
        if not items:
            continue
        out.append(Text(f"{title}:", style="bold"))
        for subject, r in items:
            out.append(Text(f"  {r.status.value.upper()} {subject} [{r.rule.value}]: "
                            f"{r.summary}", style=_STYLE[r.status]))
            out.extend(Text(f"      {d}") for d in r.details)
    fails, warns = len(report.failures()), len(report.warnings())
    out.append(Text(f"gate: {report.status.value.upper()} ({fails} failed rule(s), {warns} "
                    f"warning(s))", style=_STYLE[report.status]))
    return out


def print_table(report: GateReport, console: Console) -> None:
    from graphcert.render.console import DataConsole

    terminal = console.on_terminal if isinstance(console, DataConsole) else console.is_terminal
    for item in table_renderables(clean_value(report), console.width if terminal else None):
        console.print(item)


def render_table_text(report: GateReport, *, width: int = 100) -> str:
    """The table as plain text at a pinned width, for goldens and files."""
    from graphcert.render.console import DataConsole

    buffer = io.StringIO()  # laid out as a terminal of `width` columns would show it
    console = DataConsole(file=buffer, width=width, color_system=None, force_terminal=False,
                          tty=True, highlight=False, soft_wrap=False, legacy_windows=False)
    print_table(report, console)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


# ----------------------------------------------------------------------------------- junit

def _junit_cases(report: GateReport) -> list[tuple[str, str, str | None, RuleResult]]:
    cases: list[tuple[str, str, str | None, RuleResult]] = [
        ("graphcert.policy", r.rule.value, None, r) for r in report.checks]
    for c in report.certificates:
        cases += [(f"graphcert.{c.kind}.{c.workload}", f"{r.rule.value} on {c.gpu}", c.path, r)
                  for r in c.rules]
    return cases


def _junit_suite(created: str, policy: str, baseline: str | None, *, tests: int,
                 failures: int = 0, errors: int = 0) -> tuple[ET.Element, ET.Element]:
    """The <testsuites> root and its one <testsuite>, with the gate's properties."""
    import xml.etree.ElementTree as ET

    counts = {"tests": str(tests), "failures": str(failures), "errors": str(errors),
              "skipped": "0", "time": "0"}
    root = ET.Element("testsuites", {"name": "graphcert gate", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": "graphcert gate", **counts,
                                              "timestamp": created.removesuffix("Z")})
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", {"name": "policy", "value": policy})
    ET.SubElement(props, "property", {"name": "baseline", "value": baseline or ""})
    return root, suite


def _junit_text(root: ET.Element) -> str:
    import xml.etree.ElementTree as ET

    ET.indent(root, space="  ")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            + ET.tostring(root, encoding="unicode") + "\n")


def render_junit(report: GateReport) -> str:
    """JUnit XML: one testcase per (certificate, rule); a failed rule is a <failure>."""
    import xml.etree.ElementTree as ET

    cases = _junit_cases(report)
    failures = sum(1 for *_, r in cases if r.status is RuleStatus.FAIL)
    root, suite = _junit_suite(report.created, report.policy.source, report.baseline,
                               tests=len(cases), failures=failures)
    for classname, name, path, r in cases:
        attrs = {"classname": classname, "name": name, "time": "0"}
        if path is not None:
            attrs["file"] = path
        case = ET.SubElement(suite, "testcase", attrs)
        body = "\n".join(r.details)
        if r.status is RuleStatus.FAIL:
            failure = ET.SubElement(case, "failure", {"message": r.summary, "type": r.rule.value})
            failure.text = body or r.summary
        else:
            out = ET.SubElement(case, "system-out")
            out.text = f"{r.status.value}: {r.summary}" + (f"\n{body}" if body else "")
    return _junit_text(root)


# -------------------------------------------------------------------------------- markdown

def _md(text: str) -> str:
    """Safe inside a markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


def render_markdown(report: GateReport) -> str:
    """A markdown summary (GitHub flavoured) for $GITHUB_STEP_SUMMARY or a PR comment."""
    status = report.status.value.upper()
    n = len(report.certificates)
    lines = [f"## graphcert gate: {status}", ""]
    meta = [f"{n} certificate{'s' if n != 1 else ''} checked at {report.created}",
            f"policy: {_code(report.policy.source)}"]
    if report.baseline is not None:
        meta.append(f"baseline: {_code(report.baseline)}")
    if report.skipped_snapshots:
        meta.append(f"{report.skipped_snapshots} snapshot(s) not gated")
    lines += [" · ".join(meta), "",
              "| Result | Workload | Kind | GPU | Rules | File |",
              "|---|---|---|---|---|---|"]
    for c in report.certificates:
        rules = ", ".join(f"{r.rule.value}: **{r.status.value}**" if r.status is not RuleStatus.PASS
                          else f"{r.rule.value}: {r.status.value}" for r in c.rules)
        result = f"**{c.status.value.upper()}**" if c.status is RuleStatus.FAIL else \
            c.status.value.upper()
        lines.append(f"| {result} | {_md(c.workload)} | {c.kind} | {_md(c.gpu)} | {_md(rules)} "
                     f"| {_md(_code(c.path))} |")
    passed = [f"Policy {_code(r.rule.value)}: PASS: {r.summary}" for r in report.checks
              if r.status is RuleStatus.PASS]
    if passed:
        lines += [""] + [f"{p}  " for p in passed[:-1]] + passed[-1:]
    for title, items in (("Failures", report.failures()), ("Warnings", report.warnings())):
        if not items:
            continue
        lines += ["", f"### {title}", ""]
        for subject, r in items:
            lines.append(f"- **{subject}** {_code(r.rule.value)}: {r.summary}")
            lines += [f"  - {d}" for d in r.details]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ unusable input

def render_unusable(report: UnusableReport, fmt: OutputFormat) -> str:
    """The gate's exit 2 in `fmt`: no verdict, each unusable input on its own line (JUnit:
    one <error> per input, since nothing was tested)."""
    n = len(report.problems)
    counted = f"{n} unusable input{'s' if n != 1 else ''}"
    policy = report.policy.source if report.policy is not None else None
    if fmt is OutputFormat.TABLE:
        return "".join(f"graphcert: error: {p}\n" for p in report.problems) + \
            f"gate: UNUSABLE ({counted})\n"
    if fmt is OutputFormat.JSON:
        return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if fmt is OutputFormat.JUNIT:
        return _unusable_junit(report, policy)
    if fmt is OutputFormat.MARKDOWN:
        meta = [f"{counted} at {report.created}",
                f"policy: {_code(policy) if policy is not None else 'unreadable'}"]
        if report.baseline is not None:
            meta.append(f"baseline: {_code(report.baseline)}")
        lines = ["## graphcert gate: UNUSABLE", "", " · ".join(meta), "",
                 "The gate could not judge: fix each input below and run it again.", "",
                 *(f"- {_md(p)}" for p in report.problems)]
        return "\n".join(lines) + "\n"
    assert_never(fmt)


def _unusable_junit(report: UnusableReport, policy: str | None) -> str:
    import xml.etree.ElementTree as ET

    n = len(report.problems)
    root, suite = _junit_suite(report.created, policy or "", report.baseline, tests=n, errors=n)
    for problem in report.problems:
        case = ET.SubElement(suite, "testcase", {"classname": "graphcert.input",
                                                 "name": problem, "time": "0"})
        error = ET.SubElement(case, "error", {"message": problem, "type": "unusable"})
        error.text = problem
    return _junit_text(root)
