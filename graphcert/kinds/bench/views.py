"""The view of a bench result (`graphcert bench` and `graphcert show` draw it). Pure."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from graphcert.cert.kind import KindResult
from graphcert.cert.results.figures import QUANTITIES, SIDES, Ended, Timing
from graphcert.cert.results.measure import PlacementSpread
from graphcert.kinds.bench.result import BenchResult, SizeResult
from graphcert.kinds.sweep.result import SweepFit
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


def print_run(out: Console, err: Console, ref: str, result: BenchResult,
              certificate: Path | None) -> None:
    """One benched workload as `graphcert bench` shows it when it is done: its view on
    stdout, its certificate's path on stderr."""
    for item in bench_view(ref, result):
        out.print(item)
    if certificate:
        err.print(Text(f"certificate: {certificate}"))


def bench_json(runs: Sequence[tuple[str, BenchResult, Path | None]], fit: SweepFit | None
               ) -> str:
    """`graphcert bench --json`: each run (workload, results, certificate) and the sweep."""
    return json.dumps({"runs": [{
        "workload": ref, "results": result.to_json(),
        "certificate": str(certificate) if certificate else None}
        for ref, result, certificate in runs],
        "sweep": fit.to_json() if fit else None}, indent=2)


def show_view(ref: str, result: KindResult) -> list[RenderableType]:
    """What `graphcert show` draws of a bench certificate's results."""
    assert isinstance(result, BenchResult)
    return bench_view(ref, result)
