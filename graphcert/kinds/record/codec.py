"""The JSON of a record certificate's parts: one process (its identity, graphs, coverage,
churn, NVTX regions and graph memory), the whole run's `overall` figures written for readers,
and the single-process layout certificates had before processes were recorded. Pure."""

from __future__ import annotations

from graphcert.jsontypes import (
    Doc,
    JSONObject,
    as_doc,
    as_docs,
    as_int,
    as_int_or,
    as_ints,
    as_opt_doc,
    as_opt_float,
    as_opt_int,
    as_opt_str,
    as_str,
    as_strs,
)
from graphcert.recording import (
    Churn,
    Coverage,
    EagerGroup,
    EagerRegion,
    GraphRow,
    Made,
    Recorded,
    Regions,
)
from graphcert.recording.processes import (
    GpuSeen,
    GraphMemory,
    ProcessEnded,
    ProcessInfo,
    ProcessRecorded,
)


def recorded_to_json(r: Recorded) -> JSONObject:
    """graphs, coverage, churn, dropped_records and (where attributed) nvtx."""
    return {
        "graphs": [_row_to_json(g) for g in r.graphs],
        "coverage": coverage_block(r),
        "churn": [{"topology_hash": c.topology_hash, "shape_hash": c.shape_hash,
                   "instantiations": c.instantiations, "peak_alive": c.peak_alive,
                   "at_ns": list(c.at_ns), "rows": list(c.rows)} for c in r.churn],
        "dropped_records": r.dropped_records,
        **({} if r.regions is None else {"nvtx": regions_to_json(r.regions)})}


def coverage_block(r: Recorded) -> JSONObject:
    """{overall, steady, steady_eager} of a recording (a process's or the whole's)."""
    return {"overall": _cov_to_json(r.overall),
            "steady": None if r.steady is None else _cov_to_json(r.steady),
            "steady_eager": [{"name": e.name, "count": e.count, "total_ns": e.total_ns}
                             for e in r.steady_eager]}


def recorded_from_json(doc: Doc) -> Recorded:
    """A process's (or the single-process layout's) figures back from recorded_to_json's."""
    cov = as_doc(doc, "coverage")
    steady = as_opt_doc(cov, "steady")
    return Recorded(
        tuple(_row_from_json(g) for g in as_docs(doc, "graphs")),
        _cov_from_json(as_doc(cov, "overall")),
        None if steady is None else _cov_from_json(steady),
        tuple(EagerGroup(as_str(e, "name"), as_int(e, "count"), as_int(e, "total_ns"))
              for e in as_docs(cov, "steady_eager")),
        tuple(Churn(as_str(c, "topology_hash"), as_str(c, "shape_hash"),
                    as_int(c, "instantiations"), as_int(c, "peak_alive"),
                    tuple(as_ints(c, "at_ns")), tuple(as_ints(c, "rows")))
              for c in as_docs(doc, "churn")),
        as_int_or(doc, "dropped_records", 0),
        regions_from_json(as_opt_doc(doc, "nvtx")))


def memory_to_json(m: GraphMemory) -> JSONObject:
    """One GPU's graph memory at a process's end, in bytes."""
    return {"used_current": m.used_current, "used_high": m.used_high,
            "reserved_current": m.reserved_current, "reserved_high": m.reserved_high}


def memory_from_json(doc: Doc) -> GraphMemory:
    """One GPU's graph memory back from memory_to_json's."""
    return GraphMemory(as_int(doc, "used_current"), as_int(doc, "used_high"),
                       as_int(doc, "reserved_current"), as_int(doc, "reserved_high"))


def process_to_json(p: ProcessRecorded) -> JSONObject:
    """One process of the run (the layout with processes)."""
    i = p.info
    return {"pid": i.pid, "ppid": i.ppid, "argv": list(i.argv),
            "gpus": [{"ordinal": g.ordinal, "uuid": g.uuid, "name": g.name} for g in i.gpus],
            "ended": i.ended.value, "exit_code": i.exit_code, "problems": list(i.problems),
            **recorded_to_json(p.recorded),
            "nvtx": None if p.recorded.regions is None else regions_to_json(p.recorded.regions),
            "graph_memory": [memory_to_json(m) for m in p.graph_memory],
            "graph_memory_reason": p.memory_reason}


def process_from_json(doc: Doc) -> ProcessRecorded:
    """One process of the run back from process_to_json's."""
    info = ProcessInfo(as_int(doc, "pid"), as_int(doc, "ppid"), tuple(as_strs(doc, "argv")),
                       tuple(GpuSeen(as_int(g, "ordinal"), as_str(g, "uuid"), as_str(g, "name"))
                             for g in as_docs(doc, "gpus")),
                       ProcessEnded(as_str(doc, "ended")), as_opt_int(doc, "exit_code"),
                       tuple(as_strs(doc, "problems")))
    return ProcessRecorded(info, recorded_from_json(doc),
                           tuple(memory_from_json(m) for m in as_docs(doc, "graph_memory")),
                           as_opt_str(doc, "graph_memory_reason"))


def overall_to_json(whole: Recorded, processes: int) -> JSONObject:
    """The whole run's figures, written for readers of the JSON (evidence holds them
    against the merge of `processes`)."""
    return {"coverage": coverage_block(whole),
            "nvtx": None if whole.regions is None else regions_to_json(whole.regions),
            "graphs": len(whole.graphs), "launches": sum(g.launches for g in whole.graphs),
            "processes": processes}


def legacy_process(doc: Doc, program: tuple[str, ...]) -> ProcessRecorded:
    """The one process of a certificate in the single-process layout (written before
    processes were recorded): who it was is unknown (pid None), it was recorded in place."""
    mem = as_opt_doc(doc, "graph_memory")
    info = ProcessInfo(None, None, program, (), ProcessEnded.IN_PLACE)
    return ProcessRecorded(info, recorded_from_json(doc),
                           () if mem is None else (memory_from_json(mem),),
                           as_opt_str(doc, "graph_memory_reason"))


def legacy_to_json(p: ProcessRecorded) -> JSONObject:
    """The single-process layout's figures of its one process, as they were read."""
    return {**recorded_to_json(p.recorded),
            "graph_memory": memory_to_json(p.graph_memory[0]) if p.graph_memory else None,
            "graph_memory_reason": p.memory_reason}


def regions_to_json(r: Regions) -> JSONObject:
    """The NVTX attribution of eager kernels: ranges seen, why none, and each region."""
    return {"ranges": r.ranges, "unavailable": r.unavailable,
            "regions": [{"region": g.region, "count": g.count, "total_ns": g.total_ns}
                        for g in r.groups]}


def regions_from_json(doc: Doc | None) -> Regions | None:
    """The NVTX attribution; None where there is none (a certificate written before
    graphcert attributed eager kernels: the key is absent, so it round-trips as it was)."""
    if doc is None:
        return None
    return Regions(as_int(doc, "ranges"),
                   tuple(EagerRegion(as_str(g, "region"), as_int(g, "count"),
                                     as_int(g, "total_ns"))
                         for g in as_docs(doc, "regions")),
                   as_opt_str(doc, "unavailable"))


def _cov_to_json(c: Coverage) -> JSONObject:
    return {"graph_kernels": c.graph_kernels, "eager_kernels": c.eager_kernels,
            "graph_ns": c.graph_ns, "eager_ns": c.eager_ns}


def _cov_from_json(doc: Doc) -> Coverage:
    return Coverage(as_int(doc, "graph_kernels"), as_int(doc, "eager_kernels"),
                    as_int(doc, "graph_ns"), as_int(doc, "eager_ns"))


_ROW_FIELDS = ("index", "made", "at_ns", "instantiate_ns", "capture_ns", "topology_hash",
               "shape_hash", "node_count", "launches", "device_ns_median", "device_ns_total",
               "updates", "failed_updates", "destroyed_at_ns", "snapshot_file", "read_error")


def _row_to_json(g: GraphRow) -> JSONObject:
    doc: JSONObject = {name: getattr(g, name) for name in _ROW_FIELDS}
    doc["made"] = g.made.value
    return doc


def _row_from_json(doc: Doc) -> GraphRow:
    return GraphRow(as_int(doc, "index"), Made(as_str(doc, "made")), as_int(doc, "at_ns"),
                    as_int(doc, "instantiate_ns"), as_opt_int(doc, "capture_ns"),
                    as_opt_str(doc, "topology_hash"), as_opt_str(doc, "shape_hash"),
                    as_opt_int(doc, "node_count"), as_int(doc, "launches"),
                    as_opt_float(doc, "device_ns_median"), as_int(doc, "device_ns_total"),
                    as_int(doc, "updates"), as_int(doc, "failed_updates"),
                    as_opt_int(doc, "destroyed_at_ns"), as_opt_str(doc, "snapshot_file"),
                    as_opt_str(doc, "read_error"))
