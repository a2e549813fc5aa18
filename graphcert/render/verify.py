"""The view of a verify result: one table row per class, the class-to-class changes, the time
breakdown. `graphcert verify` and `graphcert show` (topology certificates) both draw it. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.table import Table

from graphcert.cert.compare import short_hash
from graphcert.cert.results import AnyClass, ClassResult, SampleResult, Transition, VerifyResult

if TYPE_CHECKING:
    from rich.console import RenderableType

_STYLE = {"pass": "green", "fail": "red", "skipped": "yellow"}


def _mark(value: bool | None) -> str:
    return {True: "yes", False: "[red]NO[/]", None: "-"}[value]


def _all_of(samples: Sequence[SampleResult], check: str) -> str:
    values = [getattr(s, check) for s in samples]
    if not values or all(v is None for v in values):
        return "-"
    return _mark(all(v is True for v in values if v is not None))


def _updates(samples: Sequence[SampleResult]) -> str:
    results = [s.update.result for s in samples if s.update]
    if results and all(r == "success" for r in results):
        return "ok"
    return ", ".join(sorted(set(results))) or "-"


def class_table(title: str, classes: Sequence[AnyClass]) -> Table:
    """One row per class: status, nodes against the prediction, fingerprints, the sampled
    sizes and each check over them, padding waste, the reason."""
    t = Table(title=title)
    for col in ("class", "status", "nodes", "predicted", "topology", "shape", "samples",
                "same topology", "same shape", "update", "output", "param update", "waste",
                "reason"):
        t.add_column(col, overflow="fold")
    for c in classes:
        predicted = sum(c.predicted.values()) if c.predicted else None
        if isinstance(c, ClassResult):
            s, w = c.samples, c.padding_waste
            cells = [str(c.node_count) if c.node_count is not None else "-",
                     short_hash(c.topology_hash) if c.topology_hash else "-",
                     short_hash(c.shape_hash) if c.shape_hash else "-",
                     ",".join(f"{x.n:,}" for x in s) or "-",
                     _all_of(s, "topology_equal"), _all_of(s, "shape_equal"), _updates(s),
                     _all_of(s, "output_equal"), _all_of(s, "param_update_output_equal"),
                     f"{w['min']:,}..{w['max']:,}" if "min" in w and "max" in w else "-"]
            reason = c.reason or ""
        else:
            cells = ["-"] * 10
            reason = c.reason
        t.add_row(f"{c.capacity:,}", f"[{_STYLE[c.status]}]{c.status}[/]", cells[0],
                  str(predicted) if predicted is not None else "-", *cells[1:],
                  reason[:200])
    return t


def transitions_table(rows: Sequence[Transition]) -> Table:
    """What changes from each class to the next; only topology needs a new capture."""
    t = Table(title="class to class")
    for col in ("from", "to", "change", "in place?"):
        t.add_column(col)
    for row in rows:
        t.add_row(f"{row.frm:,}", f"{row.to:,}", row.change,
                  "re-capture" if row.change == "topology" else "update in place")
    return t


def breakdown_table(phases: Mapping[str, float]) -> Table:
    """Seconds per phase of the run, in the order the phases happen."""
    t = Table(title="time")
    for col in ("phase", "seconds"):
        t.add_column(col, justify="right" if col == "seconds" else "left")
    order = ("compile", "setup", "capture", "instantiate", "update", "replay", "compare")
    for phase in sorted(phases, key=lambda p: order.index(p) if p in order else len(order)):
        t.add_row(phase, f"{phases[phase]:.3f}")
    t.add_row("total", f"{sum(phases.values()):.3f}")
    return t


def verify_view(ref: str, result: VerifyResult) -> list[RenderableType]:
    """Everything drawn for one verified workload (the verdict's reasons are the caller's)."""
    out: list[RenderableType] = [class_table(f"verify {ref}", result.classes),
                                 transitions_table(result.transitions)]
    if result.timings_s:
        out.append(breakdown_table(result.timings_s))
    return out
