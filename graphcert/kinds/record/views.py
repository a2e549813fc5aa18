"""The views of a record: the summary lines (program, coverage overall and in
steady state, graph memory), a table per graph executable, the steady-state eager kernels by
name and by NVTX range, and the churn list; where the run had several processes, a table of
them (after how the command ended) and the topologies across them (which pids instantiated
each: tensor-parallel ranks on their own GPUs share theirs), and a pid column among the
graphs. Shared by `graphcert record`, `show` and the HTML report (which adds a bar of the
coverage)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphcert.cert.kind import KindResult
from graphcert.kinds.record.result import RecordResult
from graphcert.recording import Coverage, GraphRow, Regions
from graphcert.recording.processes import GraphMemory, ProcessRecorded
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
PID_COLUMN = Column("pid", right=True)
PROCESS_COLUMNS = (
    Column("pid", key=True, right=True), Column("parent", right=True),
    Column("argv", wrap=True), Column("GPU(s)", wrap=True, sep=", "), Column("ended"),
    Column("graphs", right=True), Column("launches", right=True), Column("coverage"),
    Column("steady eager", right=True))
TOPOLOGY_COLUMNS = (
    Column("topology", key=True), Column("instantiations", right=True),
    Column("pids", wrap=True, sep=", "))
CHURN_COLUMNS = (
    Column("topology", key=True), Column("shape"), Column("instantiations", right=True),
    Column("alive at once", right=True),
    Column("graphs", wrap=True, sep=", "), Column("at", wrap=True, sep=", "))


Rows = list[tuple[str, ...]]


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
    """How the command ended, then (`rest_lines`) the whole run's figures."""
    return head_lines(r) + rest_lines(r)


def head_lines(r: RecordResult) -> list[tuple[str, str]]:
    """The command and how it ended (with several processes: how many, and the collector)."""
    ran = sum(not p.launched_nothing for p in r.processes)
    return [
        ("program", " ".join(r.program)),
        ("ended", f"{r.ended.value}, exit code {r.exit_code}"
                  + (f" ({r.detail})" if r.detail else "") + f", {r.wall_s:.2f} s"),
        *((("processes", f"{len(r.processes)}, {ran} launched kernels ("
                         + ("recorded by the injection collector" if r.collector == "injection"
                            else f"recorded {r.collector}") + ")"),) if _many(r) else ())]


def rest_lines(r: RecordResult) -> list[tuple[str, str]]:
    """The whole run's graphs, coverage, churn, graph memory and NVTX."""
    rec = r.recorded
    topologies = r.topologies()
    return [
        ("graphs", f"{len(rec.graphs)} executable(s) instantiated, {len(topologies)} "
                   f"topolog{'y' if len(topologies) == 1 else 'ies'}, "
                   f"{sum(g.launches for g in rec.graphs):,} launch(es)"),
        ("coverage", coverage_text(rec.overall)),
        ("steady state", coverage_text(rec.steady)),
        ("churn", f"{len(rec.churn)} graph(s) instantiated again (more often than alive at "
                  "once)" if rec.churn else "none"),
        ("graph memory", _memory_text(r)),
        ("NVTX", _nvtx_text(rec.regions)),
        *((("dropped", f"{rec.dropped_records} activity record(s)"),)
          if rec.dropped_records else ())]


def _many(r: RecordResult) -> bool:
    return len(r.processes) > 1


def _memory_text(r: RecordResult) -> str:
    """One process's graph memory as before; several processes' summed over their GPUs."""
    mems = [m for p in r.processes for m in p.graph_memory]
    if not mems:
        reasons = sorted({p.memory_reason for p in r.processes if p.memory_reason})
        return f"not read ({'; '.join(reasons) or 'no GPU'})"
    m = GraphMemory(*(sum(getattr(x, f) for x in mems) for f in
                      ("used_current", "used_high", "reserved_current", "reserved_high")))
    return (f"used {format_bytes(m.used_current)} (high {format_bytes(m.used_high)}), reserved "
            f"{format_bytes(m.reserved_current)}"
            + (f" over {len(mems)} GPU(s) of {len(r.processes)} processes" if _many(r) else ""))


def _process_row(p: ProcessRecorded) -> tuple[str, ...]:
    i, rec = p.info, p.recorded
    argv = " ".join(i.argv)
    steady = rec.steady
    cov = ("launched no kernel" if p.launched_nothing else
           f"{steady.fraction:.1%} steady" if steady is not None and steady.fraction is not None
           else f"{rec.overall.fraction or 0:.1%} (no steady state)")
    return (str(i.pid), str(i.ppid), argv if len(argv) <= 60 else argv[:57] + "...",
            ", ".join(f"{g.ordinal} {g.uuid[:12]}" for g in i.gpus) or "-",
            i.ended.value + (f" {i.exit_code}" if i.exit_code is not None else ""),
            str(len(rec.graphs)), f"{sum(g.launches for g in rec.graphs):,}", cov,
            "-" if steady is None else f"{steady.eager_kernels:,}")


def process_rows(r: RecordResult) -> Rows:
    """One row per process (none where the run had one process)."""
    return [_process_row(p) for p in r.processes] if _many(r) else []


def topology_rows(r: RecordResult) -> Rows:
    """Each topology with its instantiations and the pids that made it (several processes)."""
    if not _many(r):
        return []
    counts = r.topologies()
    return [(h[:12], str(counts.get(h, 0)), ", ".join(str(pid) for pid in pids))
            for h, pids in r.topologies_by_process().items()]


def _nvtx_text(regions: Regions | None) -> str:
    if regions is None:
        return "not in this certificate (written before graphcert attributed eager kernels)"
    if regions.unavailable is not None:
        return f"no attribution: {regions.unavailable}"
    return f"{regions.ranges:,} range(s) seen"


def _graph_row(g: GraphRow, pid: bool) -> tuple[str, ...]:
    fate = "alive" if g.destroyed_at_ns is None else f"destroyed at {_s(g.destroyed_at_ns)}"
    return (str(g.index), *((str(g.pid),) if pid else ()),
            g.topology_hash[:12] if g.topology_hash else "unread",
            g.made.value, "-" if g.node_count is None else str(g.node_count),
            _ms(g.capture_ns), _ms(g.instantiate_ns), _s(g.at_ns), f"{g.launches:,}",
            _us(g.device_ns_median),
            f"{g.updates}" + (f" ({g.failed_updates} failed)" if g.failed_updates else ""),
            fate, g.snapshot_file or (g.read_error or "-"))


def graph_columns(r: RecordResult) -> tuple[Column, ...]:
    """The graph table's columns: a pid column after the index with several processes."""
    return (GRAPH_COLUMNS[0], PID_COLUMN, *GRAPH_COLUMNS[1:]) if _many(r) else GRAPH_COLUMNS


def record_rows(r: RecordResult) -> tuple[Rows, Rows, Rows, Rows]:
    """The rows of the graph table, the eager-kernel table, the NVTX-region table and the
    churn list."""
    rec = r.recorded
    graphs = [_graph_row(g, _many(r)) for g in rec.graphs]
    eager: Rows = [(short_name(e.name), f"{e.count:,}", _ms(e.total_ns))
                   for e in rec.steady_eager]  # the certificate keeps e.name
    regions: Rows = [(g.region, f"{g.count:,}", _ms(g.total_ns))
                     for g in (rec.regions.groups if rec.regions is not None else ())]
    churn: Rows = [(c.topology_hash[:12], c.shape_hash[:8], str(c.instantiations),
                    str(c.peak_alive), ", ".join(map(str, c.rows)),
                    ", ".join(_s(t) for t in c.at_ns)) for c in rec.churn]
    return graphs, eager, regions, churn


def record_view(r: RecordResult) -> list[RenderableType]:
    """How it ended, the processes (several), the whole's summary, the topologies across
    processes (several), then the graph table, the steady-state eager kernels (by name and
    by NVTX range) and the churn."""
    graphs, eager, regions, churn = record_rows(r)
    procs = process_rows(r)
    out: list[RenderableType] = ([Pairs(head_lines(r)),
                                  Grid(PROCESS_COLUMNS, procs, title="processes"),
                                  Pairs(rest_lines(r))] if procs else [Pairs(summary_lines(r))])
    for title, cols, rows in (
            ("topologies across processes", TOPOLOGY_COLUMNS, topology_rows(r)),
            ("graph executables", graph_columns(r), graphs),
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
