"""The view of a bench result (`graphcert bench` and `graphcert show` draw it), the sweep
table and plot. Pure (matplotlib only inside plot)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from rich.text import Text

from graphcert.cert.results import (
    QUANTITIES,
    SIDES,
    BenchResult,
    Ended,
    PlacementSpread,
    SizeResult,
    SweepFit,
    Timing,
)
from graphcert.errors import InputError
from graphcert.fileio import atomic_write_bytes, check_output_file
from graphcert.render.layout import Column, Grid
from graphcert.render.numbers import size, us

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

LABELS = {"host_enqueue": "host enqueue", "device": "device (queued)",
          "end_to_end": "end to end"}


# A size's table: the quantity names a row; on a narrow terminal the placement spreads and
# the sample counts move under the row first (render/layout.py), the medians stay.
SIZE_COLUMNS = (Column("quantity", wrap=True, key=True), Column("stream median", right=True),
                Column("stream ±95%", right=True, wrap=True),
                Column("graph median", right=True), Column("graph ±95%", right=True, wrap=True),
                Column("speedup (95% CI)", right=True, wrap=True, sep="× "),
                Column("samples s/g", right=True, keep=-1),
                Column("placement spread s/g", right=True, keep=-2))


def _title(ref: str, row: SizeResult, count: int) -> Text:
    contexts = row.contexts
    title = Text(f"bench {ref}  n={size(row.n)}  nodes={row.node_count}"
                 f"  stream path={row.stream_path or '-'}  placements={count}"
                 + (f" in {contexts.count} context{'s' * (contexts.count != 1)}"
                    if contexts else ""))
    if row.throttled:
        title.append("  THROTTLED", style="red")
    return title


def size_table(ref: str, row: SizeResult) -> Grid:
    """Stream vs graph for one size: each median with its precision (the half-width of its 95%
    interval) and the speedup interval, the spread of each median over buffer placements (and
    the contexts they ran in), then the hot figure in its own row; a timing whose sampling
    ended short of its target (its timeout) is marked, an unavailable one says so."""
    places = row.placements
    count = max((len(p.medians_s) for side in (places or {}).values() for p in side.values()),
                default=1)
    contexts = row.contexts
    rows: list[tuple[Text | str, ...]] = []
    for q, label in LABELS.items():
        s, g, sp = row.stream.get(q), row.graph.get(q), row.speedup.get(q)
        rows.append((label, us(s.median_s if s else None), _noise(s),
                     us(g.median_s if g else None), _noise(g),
                     f"{sp.median:.2f}× [{sp.low:.2f}, {sp.high:.2f}]" if sp else
                     "unavailable", f"{s.samples if s else 0}/{g.samples if g else 0}",
                     _spreads(row, q)))
    if row.hot is not None:
        s, g = row.hot.get("stream"), row.hot.get("graph")
        ratio = f"{s.median_s / g.median_s:.2f}× (medians)" if s and g and g.median_s else "-"
        rows.append(("device hot (L2 warm, per launch)", us(s.median_s if s else None),
                     _noise(s), us(g.median_s if g else None), _noise(g), ratio,
                     f"{s.samples if s else 0}/{g.samples if g else 0}",
                     _spreads(row, "hot_device")))
    return Grid(SIZE_COLUMNS, rows, title=_title(ref, row, count),
                caption=f"one context: {contexts.kept}" if contexts and contexts.kept
                else None)


def _spreads(row: SizeResult, quantity: str) -> str:
    """(max - min) / median of the per-placement medians, stream/graph; '-' with one."""
    def one(side: str) -> str:
        p: PlacementSpread | None = (row.placements or {}).get(side, {}).get(quantity)
        return f"{p.rel_range:.1%}" if p is not None and len(p.medians_s) > 1 else "-"

    return f"{one('stream')}/{one('graph')}"


def _noise(t: Timing | None) -> Text:
    """The figure's precision (± half-width of the 95% interval of its median; a figure
    recorded without one shows its relative stddev, "sd"), marked where sampling ended on
    its timeout short of the target."""
    if t is None:
        return Text("-")
    text = Text(f"±{t.half_width:.2%}" if t.half_width is not None else f"{t.noise:.2%} sd")
    if t.ended is Ended.TIMEOUT:
        text.append(" (timeout)", style="yellow")
    return text


def _ended_counts(result: BenchResult) -> str:
    """How the run's figures ended: on their target, on their timeout, otherwise."""
    ends = [t.ended for r in result.sizes for side in SIDES for q in QUANTITIES
            for t in [r.way(side).get(q)] if t is not None]
    ends += [t.ended for r in result.sizes if r.hot is not None
             for t in (r.hot.get("stream"), r.hot.get("graph")) if t is not None]
    on_target = sum(e in (Ended.PRECISION_TARGET, Ended.NOISE_TARGET) for e in ends)
    timed_out = sum(e is Ended.TIMEOUT for e in ends)
    other = len(ends) - on_target - timed_out
    return (f"{on_target} of {len(ends)} figures on their target, {timed_out} on their "
            f"timeout" + (f", {other} otherwise" if other else ""))


UPFRONT_COLUMNS = (Column("n", right=True, key=True), Column("capture", right=True, keep=1),
                   Column("instantiate", right=True, keep=1), Column("upload", right=True),
                   Column("first launch", right=True), Column("exec update", right=True),
                   Column("set params", right=True),
                   Column("break-even launches", right=True, keep=1))


def upfront_table(rows: Sequence[SizeResult]) -> Grid:
    """What the graph costs before it pays: capture to set-params, and the break-even."""
    return Grid(UPFRONT_COLUMNS, [
        (size(r.n), us(r.upfront.capture_s), us(r.upfront.instantiate_s),
         us(r.upfront.upload_s), us(r.upfront.first_launch_s), us(r.upfront.exec_update_s),
         us(r.upfront.set_params_s),
         f"{r.break_even_launches:,.0f}" if r.break_even_launches is not None else "never")
        for r in rows], title="up-front costs")


def host_cost_line(row: SizeResult, run_bare_s: float | None) -> str | None:
    """The stream path's host cost per launch against the bare cuLaunchKernel loop (the one
    timed alongside it at this size, else the run's), or None where the stream path is not
    graphcert's prepacked launches."""
    per_op = row.stream_host_per_op_s
    floor = row.bare_host_per_op_s or run_bare_s
    if row.stream_path != "prepacked" or not floor or per_op is None:
        return None
    how = ("as many launches, timed alternately" if row.bare_host_per_op_s
           else "timed once per run")
    return (f"stream path host cost per launch {per_op * 1e6:.2f} µs; bare cuLaunchKernel "
            f"loop ({how}) {floor * 1e6:.2f} µs ({per_op / floor:.2f}×)")


def bench_view(ref: str, result: BenchResult) -> list[RenderableType]:
    """Everything drawn for one benched workload: per size, then up-front costs and clock."""
    out: list[RenderableType] = []
    bare = result.bare_launch_s
    for row in result.sizes:
        out.append(size_table(ref, row))
        line = host_cost_line(row, bare)
        if line is not None:
            out.append(Text(line))
    out.append(upfront_table(result.sizes))
    out.extend(Text(line) for line in run_lines(result))  # literal text, never markup
    clock = clock_line(result)
    if clock is not None:
        out.append(Text(clock))
    other = result.other_context
    if other is not None:  # --context both: the other driver state, apart
        label = other.context.label if other.context is not None else "other state"
        out.append(Text(f"--- the same workload in the {label} ---"))
        out.extend(bench_view(ref, other))
    return out


def clock_line(result: BenchResult) -> str | None:
    """The SM clock before and after the run, or why it was not read (None: neither)."""
    before, after = result.clock.get("before_mhz"), result.clock.get("after_mhz")
    if before is not None and after is not None:
        return f"SM clock {before:.0f} -> {after:.0f} MHz"
    if result.clock_unavailable is not None:
        return f"SM clock not read: {result.clock_unavailable.reason}"
    return None


def run_lines(result: BenchResult) -> list[str]:
    """The driver state the figures were taken in, the regimes, and the host telemetry."""
    lines = []
    if result.context is not None:
        lines.append(f"driver state: {result.context.label}")
    if any(r.hot is not None for r in result.sizes):
        lines.append("cold: L2 cleared, one sample per blocking-kernel hold; hot: a batch "
                     "back to back, L2 warm (never mixed)")
    if result.wall_s is not None:
        lines.append(f"run {result.wall_s:.1f} s wall; {_ended_counts(result)}")
    tel = result.telemetry
    if tel is not None:
        lines.append(f"host telemetry: {tel.syncs:,} synchronisations, "
                     f"{tel.htod_bytes:,} B host→device in {tel.htod_copies:,} copies, "
                     f"{tel.dtoh_bytes:,} B device→host in {tel.dtoh_copies:,} copies")
    return lines


def sweep_table(fit: SweepFit) -> Grid:
    """The a + b·value fit per way and quantity."""
    columns = (Column("way", key=True), Column("quantity", key=True, wrap=True),
               Column("a (fixed)", right=True), Column("b (per kernel)", right=True),
               Column("R²", right=True))
    rows = []
    for way in SIDES:
        for q, label in LABELS.items():
            f = fit.fit[way][q]
            rows.append((way, label, us(f.a_s if f else None), us(f.b_s if f else None),
                         f"{f.r2:.4f}" if f else "-"))
    return Grid(columns, rows, title=f"cost per launch = a + b·{fit.key}")


def sweep_points(fit: SweepFit) -> list[tuple[tuple[str, str, str, str], str | None]]:
    """Each swept run: (value, stream e2e / kernel, graph e2e / kernel, graph device / node)
    as printed, and its certificate's name (None where not written)."""
    names = list(fit.certificates) + [None] * len(fit.points)
    out = []
    for value, point, name in zip(fit.values, fit.points, names, strict=False):
        per = float(value) or 1.0
        s, g, gd = (point.stream.get("end_to_end"), point.graph.get("end_to_end"),
                    point.graph.get("device"))
        out.append(((str(value), us(s.median_s / per if s else None),
                     us(g.median_s / per if g else None),
                     us(gd.median_s / per if gd else None)), name))
    return out


def sweep_view(fit: SweepFit) -> list[RenderableType]:
    """A sweep certificate: the fit, then each point's per-launch medians and certificate."""
    columns = (Column(fit.key, right=True, key=True),
               Column("stream e2e / kernel", right=True), Column("graph e2e / kernel", right=True),
               Column("graph device / node", right=True), Column("certificate"))
    rows = [(*figures, name or "-") for figures, name in sweep_points(fit)]
    out: list[RenderableType] = [
        sweep_table(fit), Grid(columns, rows, title=f"swept {fit.key}: each run's first size")]
    if fit.plot:
        out.append(Text(f"plot: {fit.plot}"))
    return out


def _matplotlib() -> ModuleType:
    """matplotlib, set to draw into files (Agg), or InputError saying how to install it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
    except ImportError as exc:
        raise InputError("--plot needs matplotlib",
                         hint="pip install 'graphcert[plot]'") from exc
    return matplotlib


def _plot_format(path: Path) -> str:
    """The image format `path` names by its suffix (png without one, as matplotlib does)."""
    return path.suffix[1:].lower() or "png"


def check_plot_path(path: Path) -> Path:
    """Before any GPU work: `path` can be written as a file, matplotlib is importable and
    draws the format its suffix names. InputError (one line, exit 2) otherwise."""
    check_output_file(path, "--plot")
    _matplotlib()
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    if _plot_format(path) not in formats:
        raise InputError(f"--plot {path}: matplotlib cannot draw {_plot_format(path)!r} "
                         f"images", hint=f"end the name with one of "
                                         f"{', '.join(sorted(formats))}")
    return path


def plot_sweep(fit: SweepFit, path: Path) -> Path:
    """Per-kernel cost against N for stream and graph, host and device; saved to `path`.
    Drawn into memory, then written atomically: an error leaves no file behind."""
    _matplotlib()
    import matplotlib.pyplot as plt

    key, xs = fit.key, list(fit.values)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharex=True)
    try:
        for ax, (q, label) in zip(axes, LABELS.items(), strict=True):
            for way, style in (("stream", "o-"), ("graph", "s-")):
                ys = [t.median_s / x * 1e6 if (t := p.way(way).get(q)) else float("nan")
                      for x, p in zip(xs, fit.points, strict=True)]
                ax.plot(xs, ys, style, label=f"{way} launch")
            ax.set_xscale("log")
            ax.set_title(f"{label}: time per kernel")
            ax.set_xlabel(f"{key} (log scale)")
            ax.set_ylabel("µs per kernel")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
        fig.suptitle("graphcert bench: stream launch vs graph launch")
        fig.tight_layout()
        image = io.BytesIO()
        fig.savefig(image, format=_plot_format(path), dpi=110)
    except OSError as exc:  # a font or backend file matplotlib could not read
        raise InputError(f"cannot draw the plot {path}: {exc.strerror or exc}") from exc
    finally:
        plt.close(fig)
    try:
        return atomic_write_bytes(path, image.getvalue())
    except OSError as exc:
        raise InputError(f"cannot write the plot {path}: {exc.strerror or exc}") from exc


def print_run(out: Console, err: Console, ref: str, result: BenchResult,
              certificate: Path | None) -> None:
    """One benched workload as `graphcert bench` shows it when it is done: its view on
    stdout, its certificate's path on stderr."""
    for item in bench_view(ref, result):
        out.print(item)
    if certificate:
        err.print(Text(f"certificate: {certificate}"))


def print_sweep(out: Console, err: Console, fit: SweepFit, certificate: Path | None, *,
                named_plot: Path | None, asked_plot: Path | None, as_json: bool) -> None:
    """A sweep's table (not with --json) and its certificate's path, then its plots drawn,
    each in the format its name gives: the one the certificate names and --plot's."""
    if not as_json:
        out.print(sweep_table(fit))
    if certificate is not None:
        err.print(Text(f"sweep certificate: {certificate}"))
    for target in (named_plot, asked_plot):
        if target is not None:
            plot_sweep(fit, target)
    if asked_plot is not None:
        err.print(Text(f"plot: {asked_plot}"))


def bench_json(runs: Sequence[tuple[str, BenchResult, Path | None]], fit: SweepFit | None
               ) -> str:
    """`graphcert bench --json`: each run (workload, results, certificate) and the sweep."""
    return json.dumps({"runs": [{
        "workload": ref, "results": result.to_json(),
        "certificate": str(certificate) if certificate else None}
        for ref, result, certificate in runs],
        "sweep": fit.to_json() if fit else None}, indent=2)
