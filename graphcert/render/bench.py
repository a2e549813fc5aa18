"""Tables and the sweep plot for `graphcert bench`. Pure (matplotlib only inside plot)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.table import Table

LABELS = {"host_enqueue": "host enqueue", "device": "device (queued)",
          "end_to_end": "end to end"}


def us(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e6:,.2f} µs"


def size_table(ref: str, row: dict[str, Any]) -> Table:
    """Stream vs graph for one size: median ± noise per quantity and the speedup interval."""
    t = Table(title=f"bench {ref}  n={row['n']:,}  nodes={row['node_count']}"
                    f"  stream path={row['stream_path']}"
                    + ("  [red]THROTTLED[/]" if row["throttled"] else ""))
    for col in ("quantity", "stream median", "stream noise", "graph median", "graph noise",
                "speedup (95% CI)", "samples s/g"):
        t.add_column(col, justify="left" if col == "quantity" else "right")
    for q, label in LABELS.items():
        s, g, sp = row["stream"][q], row["graph"][q], row["speedup"][q]
        t.add_row(label, us(s and s["median_s"]), f"{s['noise']:.2%}" if s else "-",
                  us(g and g["median_s"]), f"{g['noise']:.2%}" if g else "-",
                  f"{sp['median']:.2f}× [{sp['low']:.2f}, {sp['high']:.2f}]" if sp else
                  "unavailable", f"{s['samples'] if s else 0}/{g['samples'] if g else 0}")
    return t


def upfront_table(rows: list[dict[str, Any]]) -> Table:
    t = Table(title="up-front costs")
    cols = ("n", "capture", "instantiate", "upload", "first launch", "exec update",
            "set params", "break-even launches")
    for col in cols:
        t.add_column(col, justify="right")
    for r in rows:
        u = r["upfront"]
        be = r["break_even_launches"]
        t.add_row(f"{r['n']:,}", us(u["capture_s"]), us(u["instantiate_s"]), us(u["upload_s"]),
                  us(u["first_launch_s"]), us(u["exec_update_s"]), us(u["set_params_s"]),
                  f"{be:,.0f}" if be is not None else "never")
    return t


def sweep_table(key: str, fit: dict[str, Any]) -> Table:
    t = Table(title=f"cost per launch = a + b·{key}")
    for col in ("way", "quantity", "a (fixed)", "b (per kernel)", "R²"):
        t.add_column(col, justify="left" if col in ("way", "quantity") else "right")
    for way in ("stream", "graph"):
        for q, label in LABELS.items():
            f = fit[way][q]
            t.add_row(way, label, us(f and f["a_s"]), us(f and f["b_s"]),
                      f"{f['r2']:.4f}" if f else "-")
    return t


def plot_sweep(key: str, points: list[dict[str, Any]], path: Path) -> Path:
    """Per-kernel cost against N for stream and graph, host and device; saved to `path`."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        from graphcert.errors import InputError

        raise InputError("--plot needs matplotlib",
                         hint="pip install 'graphcert[plot]'") from exc
    xs = [p["value"] for p in points]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharex=True)
    for ax, (q, label) in zip(axes, LABELS.items(), strict=True):
        for way, style in (("stream", "o-"), ("graph", "s-")):
            ys = [(p["result"][way][q]["median_s"] / p["value"] * 1e6)
                  if p["result"][way][q] else float("nan") for p in points]
            ax.plot(xs, ys, style, label=f"{way} launch")
        ax.set_xscale("log")
        ax.set_title(f"{label}: time per kernel")
        ax.set_xlabel(f"{key} (log scale)")
        ax.set_ylabel("µs per kernel")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle("graphcert bench: stream launch vs graph launch")
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp{path.suffix}")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(path)
    return path
