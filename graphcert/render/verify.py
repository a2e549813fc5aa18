"""The view of a verify result: one table row per class, the class-to-class changes, the time
breakdown. `graphcert verify` and `graphcert show` (topology certificates) both draw it. Pure."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from graphcert.cert.results import (
    AnyClass,
    ClassResult,
    SampleResult,
    StepBucket,
    Transition,
    VerifyResult,
)
from graphcert.model.jsontext import short_hash
from graphcert.render.inventory import format_bytes

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
    order = ("compile", "setup", "capture", "instantiate", "update", "replay", "compare",
             "release")
    for phase in sorted(phases, key=lambda p: order.index(p) if p in order else len(order)):
        t.add_row(phase, f"{phases[phase]:.3f}")
    t.add_row("total", f"{sum(phases.values()):.3f}")
    return t


BUCKET_COLUMNS = ("bucket", "framework", "capture ms", "instantiate ms", "pool",
                  "graph memory (used / reserved, high)", "replay us", "eager us",
                  "eager/replay", "cache key")


def _scaled(seconds: float | None, scale: float, digits: int) -> str:
    return "-" if seconds is None else f"{seconds * scale:,.{digits}f}"


def _graph_memory(memory: Mapping[str, int]) -> str:
    if "used_high" not in memory and "reserved_high" not in memory:
        return "-"
    return (f"{format_bytes(memory.get('used_high'))} / "
            f"{format_bytes(memory.get('reserved_high'))}")


def bucket_rows(classes: Sequence[AnyClass]) -> list[tuple[str, ...]]:
    """One row of BUCKET_COLUMNS per class with framework-step facts (the terminal and the
    HTML report draw the same cells): capture and instantiate time, the framework pool's
    bytes, the driver's graph memory high marks, replay and eager time (medians), their
    ratio, and the graph cache key's first digits."""
    rows: list[tuple[str, ...]] = []
    for c in classes:
        b: StepBucket | None = c.bucket if isinstance(c, ClassResult) else None
        if b is None:
            continue
        speedup = b.speedup
        key = b.cache_key.get("key") if b.cache_key else None
        rows.append((f"{c.capacity:,}", b.framework, _scaled(b.capture_s, 1e3, 2),
                     _scaled(b.instantiate_s, 1e3, 2), format_bytes(b.pool_bytes),
                     _graph_memory(b.graph_memory), _scaled(b.replay_s, 1e6, 1),
                     _scaled(b.eager_s, 1e6, 1), "-" if speedup is None else f"{speedup:.1f}x",
                     short_hash(key) if isinstance(key, str) else "-"))
    return rows


def bucket_table(classes: Sequence[AnyClass]) -> Table | None:
    """The framework-step facts per bucket (None when no class has them)."""
    rows = bucket_rows(classes)
    if not rows:
        return None
    t = Table(title="buckets (framework step)")
    for col in BUCKET_COLUMNS:
        t.add_column(col, justify="left" if col in ("framework", "cache key") else "right")
    for row in rows:
        t.add_row(*row)
    return t


def verify_view(ref: str, result: VerifyResult) -> list[RenderableType]:
    """Everything drawn for one verified workload (the verdict's reasons are the caller's)."""
    out: list[RenderableType] = [class_table(f"verify {ref}", result.classes)]
    buckets = bucket_table(result.classes)
    if buckets is not None:
        out.append(buckets)
    out.append(transitions_table(result.transitions))
    if result.timings_s:
        out.append(breakdown_table(result.timings_s))
    return out


def verify_json(runs: Sequence[tuple[str, VerifyResult, Path | None]]) -> str:
    """`graphcert verify --json`: per workload its verdict, results and certificate."""
    return json.dumps([{
        "workload": ref, "passed": result.verdict.passed,
        "status": result.verdict.status.value, "reasons": list(result.verdict.reasons),
        "results": result.to_json(),
        "certificate": str(certificate) if certificate else None}
        for ref, result, certificate in runs], indent=2)
