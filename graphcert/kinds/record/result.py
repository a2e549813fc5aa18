"""The record result (issue 32): what `graphcert record -- python app.py` observed of a running
program (every graph executable, dispatch coverage, churn, graph memory) and how the program
ended. Written as a `record` certificate; the gate's record rules (graphcert.kinds.record.rules)
hold it to min_graph_coverage, max_instantiations_per_topology, max_steady_eager_launches
and compare its topologies with a baseline record. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from graphcert.cert.results.verdict import Verdict
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

    def to_json(self) -> dict[str, Any]:
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
    def from_json(cls, doc: Mapping[str, Any],
                  verdict: Mapping[str, Any] | None = None) -> RecordResult:
        cov = doc["coverage"]
        steady = cov.get("steady")
        recorded = Recorded(
            tuple(_row_from_json(g) for g in doc["graphs"]), _cov_from_json(cov["overall"]),
            None if steady is None else _cov_from_json(steady),
            tuple(EagerGroup(str(e["name"]), int(e["count"]), int(e["total_ns"]))
                  for e in cov["steady_eager"]),
            tuple(Churn(str(c["topology_hash"]), str(c["shape_hash"]), int(c["instantiations"]),
                        int(c["peak_alive"]),
                        tuple(int(t) for t in c["at_ns"]), tuple(int(i) for i in c["rows"]))
                  for c in doc["churn"]),
            int(doc.get("dropped_records", 0)),
            *_regions_from_json(doc.get("nvtx")))
        mem = doc.get("graph_memory")
        exit_code, ended = int(doc["exit_code"]), Ended(doc["ended"])
        detail = doc.get("detail")
        return cls(tuple(str(a) for a in doc["program"]), exit_code, ended,
                   float(doc["wall_s"]), recorded, int(doc["cupti_version"]),
                   None if mem is None else GraphMemory(
                       int(mem["used_current"]), int(mem["used_high"]),
                       int(mem["reserved_current"]), int(mem["reserved_high"])),
                   doc.get("graph_memory_reason"), detail,
                   verdict=Verdict.from_json(verdict) if verdict is not None
                   else cls.judge(exit_code, ended, recorded, detail))


def _regions_to_json(r: Regions) -> dict[str, Any]:
    return {"ranges": r.ranges, "unavailable": r.unavailable,
            "regions": [{"region": g.region, "count": g.count, "total_ns": g.total_ns}
                        for g in r.groups]}


def _regions_from_json(doc: Mapping[str, Any] | None) -> tuple[Regions | None]:
    """The NVTX attribution of a certificate; None where it has none (written before
    graphcert attributed eager kernels: the key is absent, so it round-trips as it was)."""
    if doc is None:
        return (None,)
    return (Regions(int(doc["ranges"]),
                    tuple(EagerRegion(str(g["region"]), int(g["count"]), int(g["total_ns"]))
                          for g in doc["regions"]),
                    doc.get("unavailable")),)


def _cov_to_json(c: Coverage) -> dict[str, Any]:
    return {"graph_kernels": c.graph_kernels, "eager_kernels": c.eager_kernels,
            "graph_ns": c.graph_ns, "eager_ns": c.eager_ns}


def _cov_from_json(doc: Mapping[str, Any]) -> Coverage:
    return Coverage(int(doc["graph_kernels"]), int(doc["eager_kernels"]),
                    int(doc["graph_ns"]), int(doc["eager_ns"]))


_ROW_FIELDS = ("index", "made", "at_ns", "instantiate_ns", "capture_ns", "topology_hash",
               "shape_hash", "node_count", "launches", "device_ns_median", "device_ns_total",
               "updates", "failed_updates", "destroyed_at_ns", "snapshot_file", "read_error")


def _row_to_json(g: GraphRow) -> dict[str, Any]:
    doc = {name: getattr(g, name) for name in _ROW_FIELDS}
    doc["made"] = g.made.value
    return doc


def _row_from_json(doc: Mapping[str, Any]) -> GraphRow:
    def opt_int(key: str) -> int | None:
        v = doc.get(key)
        return None if v is None else int(v)

    median = doc.get("device_ns_median")
    return GraphRow(int(doc["index"]), Made(doc["made"]), int(doc["at_ns"]),
                    int(doc["instantiate_ns"]), opt_int("capture_ns"), doc.get("topology_hash"),
                    doc.get("shape_hash"), opt_int("node_count"), int(doc["launches"]),
                    None if median is None else float(median), int(doc["device_ns_total"]),
                    int(doc["updates"]), int(doc["failed_updates"]),
                    opt_int("destroyed_at_ns"), doc.get("snapshot_file"),
                    doc.get("read_error"))
