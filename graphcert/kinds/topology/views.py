"""The view of a verify result: one table row per class, the class-to-class changes, the time
breakdown. `graphcert verify` and `graphcert show` (topology certificates) both draw it. Pure."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from graphcert.cert.compare import CertificateDiff, hash_change
from graphcert.cert.kind import KindResult
from graphcert.kinds.topology.result import (
    AnyClass,
    ClassResult,
    SampleResult,
    Transition,
    VerifyResult,
)
from graphcert.kinds.topology.steps import StepBucket
from graphcert.model.jsontext import short_hash
from graphcert.render.inventory import format_bytes
from graphcert.render.layout import Column, Grid
from graphcert.render.numbers import size, sizes

if TYPE_CHECKING:
    from rich.console import RenderableType

_STYLE = {"pass": "green", "fail": "red", "skipped": "yellow"}


def _mark(value: bool | None) -> Text:
    return {True: Text("yes"), False: Text("NO", style="red"), None: Text("-")}[value]


def _all_of(samples: Sequence[SampleResult], check: str) -> Text:
    values = [getattr(s, check) for s in samples]
    if not values or all(v is None for v in values):
        return Text("-")
    return _mark(all(v is True for v in values if v is not None))


def _updates(samples: Sequence[SampleResult]) -> str:
    results = [s.update.result for s in samples if s.update]
    if results and all(r == "success" for r in results):
        return "ok"
    return ", ".join(sorted(set(results))) or "-"


# A class names its row; on a narrow terminal its reason and its sampled sizes (free text and
# a list) move under the row first, then the widest columns (render/layout.py).
CLASS_COLUMNS = (
    Column("class", right=True, key=True), Column("status", key=True),
    Column("nodes", right=True), Column("predicted", right=True), Column("topology"),
    Column("shape"), Column("samples", wrap=True, keep=-1, sep=", "),
    Column("same topology", wrap=True), Column("same shape", wrap=True),
    Column("update", wrap=True, sep=", "), Column("output"),
    Column("param update", wrap=True), Column("waste"), Column("reason", wrap=True, keep=-2))


def class_table(title: str, classes: Sequence[AnyClass]) -> Grid:
    """One row per class: status, nodes against the prediction, fingerprints, the sampled
    sizes and each check over them, padding waste, the reason."""
    rows: list[tuple[Text | str, ...]] = []
    for c in classes:
        predicted = sum(c.predicted.values()) if c.predicted else None
        cells: list[Text | str]
        if isinstance(c, ClassResult):
            s, w = c.samples, c.padding_waste
            cells = [str(c.node_count) if c.node_count is not None else "-",
                     short_hash(c.topology_hash) if c.topology_hash else "-",
                     short_hash(c.shape_hash) if c.shape_hash else "-",
                     sizes(x.n for x in s),
                     _all_of(s, "topology_equal"), _all_of(s, "shape_equal"), _updates(s),
                     _all_of(s, "output_equal"), _all_of(s, "param_update_output_equal"),
                     f"{size(w['min'])}..{size(w['max'])}" if "min" in w and "max" in w
                     else "-"]
            reason = c.reason or ""
        else:
            cells = ["-"] * 10
            reason = c.reason
        rows.append((size(c.capacity), Text(c.status, style=_STYLE[c.status]), cells[0],
                     str(predicted) if predicted is not None else "-", *cells[1:], reason))
    return Grid(CLASS_COLUMNS, rows, title=title)


def transitions_table(rows: Sequence[Transition]) -> Grid:
    """What changes from each class to the next; only topology needs a new capture."""
    return Grid((Column("from", right=True, key=True), Column("to", right=True, key=True),
                 Column("change", wrap=True), Column("in place?", wrap=True)),
                [(size(row.frm), size(row.to), row.change,
                  "re-capture" if row.change == "topology" else "update in place")
                 for row in rows], title="class to class")


def breakdown_table(phases: Mapping[str, float]) -> Grid:
    """Seconds per phase of the run, in the order the phases happen."""
    order = ("compile", "setup", "capture", "instantiate", "update", "replay", "compare",
             "release")
    rows = [(phase, f"{phases[phase]:.3f}") for phase in
            sorted(phases, key=lambda p: order.index(p) if p in order else len(order))]
    rows.append(("total", f"{sum(phases.values()):.3f}"))
    return Grid((Column("phase", key=True), Column("seconds", right=True)), rows,
                title="time")


BUCKET_COLUMNS = ("bucket", "framework", "capture ms", "instantiate ms", "pool",
                  "graph memory (used / reserved, high)", "replay µs", "eager µs",
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
        rows.append((size(c.capacity), b.framework, _scaled(b.capture_s, 1e3, 2),
                     _scaled(b.instantiate_s, 1e3, 2), format_bytes(b.pool_bytes),
                     _graph_memory(b.graph_memory), _scaled(b.replay_s, 1e6, 1),
                     _scaled(b.eager_s, 1e6, 1), "-" if speedup is None else f"{speedup:.1f}x",
                     short_hash(key) if isinstance(key, str) else "-"))
    return rows


def bucket_table(classes: Sequence[AnyClass]) -> Grid | None:
    """The framework-step facts per bucket (None when no class has them)."""
    rows = bucket_rows(classes)
    if not rows:
        return None
    columns = [Column(col, right=col not in ("framework", "cache key"),
                      wrap=col.startswith("graph memory"), key=col == "bucket")
               for col in BUCKET_COLUMNS]
    return Grid(columns, rows, title="buckets (framework step)")


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


def show_view(ref: str, result: KindResult) -> list[RenderableType]:
    """What `graphcert show` draws of a topology certificate's results."""
    assert isinstance(result, VerifyResult)
    return verify_view(ref, result)


# diff's class table: the size names a row; a hash change is two tokens ("a -> b") that may
# break only at their arrow; node counts are a list.
_CLASS_COLUMNS = (Column("capacity", right=True, key=True), Column("change", key=True),
                  Column("topology a -> b", wrap=True), Column("shape a -> b", wrap=True),
                  Column("nodes", wrap=True, sep=", "))


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"


def diff_view(diff: CertificateDiff) -> list[RenderableType]:
    """What `graphcert diff` draws of two topology certificates' classes."""
    classes: list[tuple[str | Text, ...]] = []
    for c in diff.classes:
        style = "" if c.change == "same" else "bold red" if c.change == "topology" \
            else "yellow"
        classes.append((size(c.capacity), Text(c.change, style=style),
                        hash_change(c.baseline_topology, c.current_topology),
                        hash_change(c.baseline_shape, c.current_shape),
                        c.describe().split("nodes ", 1)[-1] if c.change in
                        ("topology", "shape") else _counts(c.current_counts)))
    out: list[RenderableType] = [Grid(_CLASS_COLUMNS, classes)]
    for c in diff.classes:
        out += [Text(f"  class {size(c.capacity)}: {line}") for line in c.node_diff]
    return out
