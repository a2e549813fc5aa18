"""The views of a record (issue 32): the summary lines (program, coverage overall and in
steady state, graph memory), a table per graph executable, the steady-state eager kernels by
name and by NVTX range, and the churn list. Shared by `graphcert record`, `show` and the
HTML report (which adds a bar of the coverage)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphcert.cert.kind import KindResult
from graphcert.kinds.record.result import RecordResult
from graphcert.recording import Coverage, GraphRow, Regions
from graphcert.render.inventory import format_bytes
from graphcert.render.layout import Column, Grid
from graphcert.render.names import short_name
from graphcert.render.words import Pairs

if TYPE_CHECKING:
    from rich.console import RenderableType

GRAPH_COLUMNS = (
    Column("#", key=True, right=True), Column("topology"), Column("made"),
    Column("nodes", right=True), Column("capture", right=True),
    Column("instantiate", right=True), Column("at", right=True),
    Column("launches", right=True), Column("per launch", right=True),
    Column("updates", right=True), Column("fate"), Column("snapshot", wrap=True))
EAGER_COLUMNS = (
    Column("eager kernel (steady state)", key=True, wrap=True),
    Column("launches", right=True), Column("device time", right=True))
REGION_COLUMNS = (
    Column("NVTX range (steady state, eager)", key=True, wrap=True),
    Column("launches", right=True), Column("device time", right=True))
CHURN_COLUMNS = (
    Column("topology", key=True), Column("shape"), Column("instantiations", right=True),
    Column("alive at once", right=True),
    Column("graphs", wrap=True, sep=", "), Column("at", wrap=True, sep=", "))


def _ms(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:.3f} ms"


def _us(ns: float | None) -> str:
    # "µs", as every other view writes a microsecond
    return "-" if ns is None else f"{ns / 1e3:.1f} \u00b5s"


def _s(ns: int) -> str:
    return f"{ns / 1e9:.3f} s"


def coverage_text(c: Coverage | None) -> str:
    """`93.1% of 1,234 kernel launches by graphs (95.0% of device time)`."""
    if c is None:
        return "no graph launched a kernel (no steady state)"
    if c.fraction is None:
        return "no kernel ran"
    time = f" ({c.time_fraction:.1%} of device time)" if c.time_fraction is not None else ""
    return (f"{c.fraction:.1%} of {c.kernels:,} kernel launches by graphs{time}; "
            f"{c.eager_kernels:,} eager")


def summary_lines(r: RecordResult) -> list[tuple[str, str]]:
    rec = r.recorded
    mem = r.graph_memory
    topologies = r.topologies()
    return [
        ("program", " ".join(r.program)),
        ("ended", f"{r.ended.value}, exit code {r.exit_code}"
                  + (f" ({r.detail})" if r.detail else "") + f", {r.wall_s:.2f} s"),
        ("graphs", f"{len(rec.graphs)} executable(s) instantiated, {len(topologies)} "
                   f"topolog{'y' if len(topologies) == 1 else 'ies'}, "
                   f"{sum(g.launches for g in rec.graphs):,} launch(es)"),
        ("coverage", coverage_text(rec.overall)),
        ("steady state", coverage_text(rec.steady)),
        ("churn", f"{len(rec.churn)} graph(s) instantiated again (more often than alive at "
                  "once)" if rec.churn else "none"),
        ("graph memory", f"used {format_bytes(mem.used_current)} (high "
                         f"{format_bytes(mem.used_high)}), reserved "
                         f"{format_bytes(mem.reserved_current)}" if mem is not None
         else f"not read ({r.graph_memory_reason})"),
        ("NVTX", _nvtx_text(rec.regions)),
        *((("dropped", f"{rec.dropped_records} activity record(s)"),)
          if rec.dropped_records else ())]


def _nvtx_text(regions: Regions | None) -> str:
    if regions is None:
        return "not in this certificate (written before graphcert attributed eager kernels)"
    if regions.unavailable is not None:
        return f"no attribution: {regions.unavailable}"
    return f"{regions.ranges:,} range(s) seen"


def _graph_row(g: GraphRow) -> tuple[str, ...]:
    fate = "alive" if g.destroyed_at_ns is None else f"destroyed at {_s(g.destroyed_at_ns)}"
    return (str(g.index), g.topology_hash[:12] if g.topology_hash else "unread",
            g.made.value, "-" if g.node_count is None else str(g.node_count),
            _ms(g.capture_ns), _ms(g.instantiate_ns), _s(g.at_ns), f"{g.launches:,}",
            _us(g.device_ns_median),
            f"{g.updates}" + (f" ({g.failed_updates} failed)" if g.failed_updates else ""),
            fate, g.snapshot_file or (g.read_error or "-"))


Rows = list[tuple[str, ...]]


def record_rows(r: RecordResult) -> tuple[Rows, Rows, Rows, Rows]:
    """The rows of the graph table, the eager-kernel table, the NVTX-region table and the
    churn list."""
    rec = r.recorded
    graphs = [_graph_row(g) for g in rec.graphs]
    eager: Rows = [(short_name(e.name), f"{e.count:,}", _ms(e.total_ns))
                   for e in rec.steady_eager]  # the certificate keeps e.name
    regions: Rows = [(g.region, f"{g.count:,}", _ms(g.total_ns))
                     for g in (rec.regions.groups if rec.regions is not None else ())]
    churn: Rows = [(c.topology_hash[:12], c.shape_hash[:8], str(c.instantiations),
                    str(c.peak_alive), ", ".join(map(str, c.rows)),
                    ", ".join(_s(t) for t in c.at_ns)) for c in rec.churn]
    return graphs, eager, regions, churn


def record_view(r: RecordResult) -> list[RenderableType]:
    """The summary, then the graph table, the steady-state eager kernels (by name and by
    NVTX range) and the churn."""
    graphs, eager, regions, churn = record_rows(r)
    out: list[RenderableType] = [Pairs(summary_lines(r))]
    for title, cols, rows in (
            ("graph executables", GRAPH_COLUMNS, graphs),
            ("eager kernels in steady state", EAGER_COLUMNS, eager),
            ("eager kernels in steady state by NVTX range", REGION_COLUMNS, regions),
            ("churn: one graph instantiated again", CHURN_COLUMNS, churn)):
        if rows:
            out.append(Grid(cols, rows, title=title))
    return out


def show_view(ref: str, result: KindResult) -> list[RenderableType]:
    """What `graphcert show` draws of a record certificate's results."""
    assert isinstance(result, RecordResult)
    return record_view(result)
