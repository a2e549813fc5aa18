"""Tables for `graphcert verify`. Pure: works on ClassReport-like objects and plain dicts."""

from __future__ import annotations

from typing import Any

from rich.table import Table

_STYLE = {"pass": "green", "fail": "red", "skipped": "yellow"}


def _mark(value: Any) -> str:
    return {True: "yes", False: "[red]NO[/]", None: "-"}[value]


def class_table(ref: str, reports: list[Any]) -> Table:
    """One row per class: status, nodes vs prediction, per-sample checks, padding waste."""
    t = Table(title=f"verify {ref}")
    for col in ("class", "status", "nodes", "predicted", "samples", "topology", "shape",
                "update", "output", "param update", "waste", "reason"):
        t.add_column(col, overflow="fold")
    for r in reports:
        doc = r.to_json()
        samples = doc["samples"]

        def all_of(key: str, samples: list[dict[str, Any]] = samples) -> str:
            values = [s[key] for s in samples]
            if not values or all(v is None for v in values):
                return "-"
            return _mark(all(v is True for v in values if v is not None))

        updates = [s["update"]["result"] for s in samples if s.get("update")]
        waste = doc["padding_waste"]
        t.add_row(f"{r.capacity:,}", f"[{_STYLE[r.status]}]{r.status}[/]",
                  str(doc["node_count"] if doc["node_count"] is not None else "-"),
                  str(sum(doc["predicted"].values())) if doc["predicted"] else "-",
                  ",".join(f"{s['n']:,}" for s in samples) or "-",
                  all_of("topology_equal"), all_of("shape_equal"),
                  "ok" if updates and all(u == "success" for u in updates) else
                  (", ".join(sorted(set(updates))) or "-"),
                  all_of("output_equal"), all_of("param_update_output_equal"),
                  f"{waste['min']:,}..{waste['max']:,}" if waste else "-",
                  (doc["reason"] or "")[:200])
    return t


def transitions_table(rows: list[dict[str, Any]]) -> Table:
    """What changes from each class to the next; only topology needs a new capture."""
    t = Table(title="class to class")
    for col in ("from", "to", "change", "in place?"):
        t.add_column(col)
    for row in rows:
        change = str(row["change"])
        t.add_row(f"{row['from']:,}", f"{row['to']:,}", change,
                  "re-capture" if change == "topology" else "update in place")
    return t


def breakdown_table(phases: dict[str, float]) -> Table:
    t = Table(title="time")
    for col in ("phase", "seconds"):
        t.add_column(col, justify="right" if col == "seconds" else "left")
    order = ("compile", "setup", "capture", "instantiate", "update", "replay", "compare")
    for phase in sorted(phases, key=lambda p: order.index(p) if p in order else len(order)):
        t.add_row(phase, f"{phases[phase]:.3f}")
    t.add_row("total", f"{sum(phases.values()):.3f}")
    return t
