"""The record result (issue 32): what `graphcert record -- python app.py` observed of a running
program (every graph executable, dispatch coverage, churn, graph memory) and how the program
ended. Written as a `record` certificate; the gate's record rules (graphcert.kinds.record.rules)
hold it to min_graph_coverage, max_instantiations_per_topology, max_steady_eager_launches
and compare its topologies with a baseline record. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import ClassVar

from graphcert.cert.results.verdict import Verdict
from graphcert.jsontypes import (
    Doc,
    JSONObject,
    as_doc,
    as_docs,
    as_float,
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


class Ended(str, Enum):
    """How the recorded program ended."""

    EXIT = "exit"  # returned, or called sys.exit (exit_code says with what)
    EXCEPTION = "exception"  # raised (including at import): exit code 1
    INTERRUPTED = "interrupted"  # Ctrl-C (SIGINT): exit code 130
    TERMINATED = "terminated"  # SIGTERM: exit code 143
    KILLED = "killed"  # another signal (SIGKILL, SIGSEGV): exit code 128 + its number


@dataclass(frozen=True)
class GraphMemory:
    """The driver's graph memory at the end (cuDeviceGetGraphMemAttribute), bytes."""

    used_current: int
    used_high: int
    reserved_current: int
    reserved_high: int


@dataclass(frozen=True)
class RecordResult:
    """One recorded run of a program."""

    kind: ClassVar[str] = "record"

    program: tuple[str, ...]  # the argv it ran with (argv[0]: the script or -m module)
    exit_code: int
    ended: Ended
    wall_s: float
    recorded: Recorded
    cupti_version: int
    graph_memory: GraphMemory | None = None
    graph_memory_reason: str | None = None  # why graph_memory is None
    detail: str | None = None  # the exception's one line, when it raised
    verdict: Verdict = field(kw_only=True)

    @staticmethod
    def judge(exit_code: int, ended: Ended, recorded: Recorded,
              detail: str | None = None) -> Verdict:
        """The record's own verdict: incomplete when the program did not run to a clean end
        (non-zero exit, exception, Ctrl-C, SIGTERM), when CUPTI dropped records, or when no
        kernel ran at all (nothing was observed to judge); else pass. Coverage and churn are
        the gate's policy keys, not this verdict."""
        missing = []
        if ended is not Ended.EXIT or exit_code != 0:
            missing.append(f"the program ended by {ended.value} with exit code {exit_code}"
                           + (f": {detail}" if detail else ""))
        if recorded.dropped_records:
            missing.append(f"CUPTI dropped {recorded.dropped_records} activity record(s): "
                           "the coverage figures undercount")
        if not recorded.overall.kernels:
            missing.append("no kernel ran on the GPU while recording (the program never "
                           "used CUDA?)")
        return Verdict.of((), missing)

    @property
    def framework(self) -> str | None:
        """None: a record certificate's method is the same whatever made the graphs."""
        return None

    def rejudged(self) -> Verdict:
        return RecordResult.judge(self.exit_code, self.ended, self.recorded, self.detail)

    def topologies(self) -> dict[str, int]:
        """Topology hash -> instantiations (graphs whose source graph was read)."""
        out: dict[str, int] = {}
        for g in self.recorded.graphs:
            if g.topology_hash is not None:
                out[g.topology_hash] = out.get(g.topology_hash, 0) + 1
        return out

    def to_json(self) -> JSONObject:
        r = self.recorded
        mem = self.graph_memory
        return {
            "program": list(self.program), "exit_code": self.exit_code,
            "ended": self.ended.value, "detail": self.detail, "wall_s": self.wall_s,
            "cupti_version": self.cupti_version,
            "graphs": [_row_to_json(g) for g in r.graphs],
            "coverage": {"overall": _cov_to_json(r.overall),
                         "steady": None if r.steady is None else _cov_to_json(r.steady),
                         "steady_eager": [{"name": e.name, "count": e.count,
                                           "total_ns": e.total_ns} for e in r.steady_eager]},
            "churn": [{"topology_hash": c.topology_hash, "shape_hash": c.shape_hash,
                       "instantiations": c.instantiations, "peak_alive": c.peak_alive,
                       "at_ns": list(c.at_ns), "rows": list(c.rows)} for c in r.churn],
            "dropped_records": r.dropped_records,
            **({} if r.regions is None else {"nvtx": _regions_to_json(r.regions)}),
            "graph_memory": None if mem is None else {
                "used_current": mem.used_current, "used_high": mem.used_high,
                "reserved_current": mem.reserved_current, "reserved_high": mem.reserved_high},
            "graph_memory_reason": self.graph_memory_reason}

    @classmethod
    def from_json(cls, doc: Doc, verdict: Doc | None = None) -> RecordResult:
        cov = as_doc(doc, "coverage")
        steady = as_opt_doc(cov, "steady")
        recorded = Recorded(
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
            *_regions_from_json(as_opt_doc(doc, "nvtx")))
        mem = as_opt_doc(doc, "graph_memory")
        exit_code, ended = as_int(doc, "exit_code"), Ended(as_str(doc, "ended"))
        detail = as_opt_str(doc, "detail")
        return cls(tuple(as_strs(doc, "program")), exit_code, ended,
                   as_float(doc, "wall_s"), recorded, as_int(doc, "cupti_version"),
                   None if mem is None else GraphMemory(
                       as_int(mem, "used_current"), as_int(mem, "used_high"),
                       as_int(mem, "reserved_current"), as_int(mem, "reserved_high")),
                   as_opt_str(doc, "graph_memory_reason"), detail,
                   verdict=Verdict.from_json(verdict) if verdict is not None
                   else cls.judge(exit_code, ended, recorded, detail))


def _regions_to_json(r: Regions) -> JSONObject:
    return {"ranges": r.ranges, "unavailable": r.unavailable,
            "regions": [{"region": g.region, "count": g.count, "total_ns": g.total_ns}
                        for g in r.groups]}


def _regions_from_json(doc: Doc | None) -> tuple[Regions | None]:
    """The NVTX attribution of a certificate; None where it has none (written before
    graphcert attributed eager kernels: the key is absent, so it round-trips as it was)."""
    if doc is None:
        return (None,)
    return (Regions(as_int(doc, "ranges"),
                    tuple(EagerRegion(as_str(g, "region"), as_int(g, "count"),
                                      as_int(g, "total_ns"))
                          for g in as_docs(doc, "regions")),
                    as_opt_str(doc, "unavailable")),)


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
