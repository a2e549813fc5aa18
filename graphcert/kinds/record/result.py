"""The record result: what `graphcert record -- COMMAND` observed of a command's processes
(every graph executable, dispatch coverage, churn and graph memory of each, and their merge
into the whole run) and how the command ended; or, `graphcert.record()` inside a program,
the one process it ran in. Written as a `record` certificate; the gate's record rules
(graphcert.kinds.record.rules) hold each process and the whole to min_graph_coverage,
max_instantiations_per_topology, max_steady_eager_launches and compare its topologies with
a baseline record. Pure.

Certificates written before processes were recorded (one process, its figures at the top of
`results`) read back as one process whose pid is None (unknown), collector "in-place", and
write back in that layout, exactly as they were.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import ClassVar

from graphcert.cert.results.verdict import Verdict
from graphcert.jsontypes import (
    Doc,
    JSONObject,
    as_docs,
    as_float,
    as_int,
    as_opt_str,
    as_str,
    as_strs,
)
from graphcert.kinds.record.codec import (
    legacy_process,
    legacy_to_json,
    overall_to_json,
    process_from_json,
    process_to_json,
)
from graphcert.recording import Recorded
from graphcert.recording.processes import (
    GraphMemory,
    ProcessEnded,
    ProcessRecorded,
    merge,
)

COLLECTORS = ("injection", "in-place")  # record -- COMMAND; graphcert.record() in a program
GONE = (ProcessEnded.KILLED, ProcessEnded.OUTLIVED)


class Ended(str, Enum):
    """How the recorded command (its own process) ended."""

    EXIT = "exit"  # returned, or called sys.exit (exit_code says with what)
    EXCEPTION = "exception"  # raised (including at import): exit code 1
    INTERRUPTED = "interrupted"  # Ctrl-C (SIGINT): exit code 130
    TERMINATED = "terminated"  # SIGTERM: exit code 143
    KILLED = "killed"  # another signal (SIGKILL, SIGSEGV): exit code 128 + its number


def who(p: ProcessRecorded) -> str:
    """`pid 1234 (python worker.py)`, or `the program` where the pid is not known."""
    argv = " ".join(p.info.argv)
    argv = argv if len(argv) <= 60 else argv[:57] + "..."
    return f"pid {p.info.pid} ({argv})" if p.info.pid is not None else f"the program ({argv})"


@dataclass(frozen=True)
class RecordResult:
    """One recorded run of a command: each of its processes and (`recorded`) their whole."""

    kind: ClassVar[str] = "record"

    program: tuple[str, ...]  # the command's argv (in place: the script or -m module)
    exit_code: int
    ended: Ended
    wall_s: float
    processes: tuple[ProcessRecorded, ...]
    cupti_version: int
    collector: str  # "injection" or "in-place" (COLLECTORS)
    detail: str | None = None  # the exception's one line, when it raised
    verdict: Verdict = field(kw_only=True)

    @cached_property
    def recorded(self) -> Recorded:
        """The whole run: every process's graphs, coverage summed (merge)."""
        return merge(self.processes)

    @property
    def legacy(self) -> bool:
        """Read from the single-process layout (its process's pid is not known)."""
        return len(self.processes) == 1 and self.processes[0].info.pid is None

    @staticmethod
    def judge(exit_code: int, ended: Ended, processes: Sequence[ProcessRecorded],
              detail: str | None = None) -> Verdict:
        """The record's own verdict: incomplete when the command did not run to a clean end
        (non-zero exit, exception, Ctrl-C, SIGTERM), when a process was killed or outlived
        the command, had problems, or lost records to CUPTI, or when no kernel ran in any
        process (nothing was observed to judge); else pass. A process that launched no
        kernel while others did is no failure. Coverage and churn are the gate's."""
        missing = []
        if ended is not Ended.EXIT or exit_code != 0:
            missing.append(f"the program ended by {ended.value} with exit code {exit_code}"
                           + (f": {detail}" if detail else ""))
        many = len(processes) > 1
        for p in processes:
            at = f"{who(p)}: " if many or p.info.pid is not None else ""
            if p.info.ended in GONE:
                missing.append(f"{who(p)} was {p.info.ended.value} ("
                               + ("gone without its end line" if p.info.ended
                                  is ProcessEnded.KILLED else "still running when the "
                                  "command ended") + "): its recording is not whole")
            missing += [f"{at}{problem}" for problem in p.info.problems]
            if p.recorded.dropped_records:
                missing.append(f"{at}CUPTI dropped {p.recorded.dropped_records} activity "
                               "record(s): the coverage figures undercount")
        if all(p.launched_nothing for p in processes):
            missing.append("no kernel ran on the GPU in any process (the command never used "
                           "CUDA?)" if many else "no kernel ran on the GPU while recording "
                           "(the program never used CUDA?)")
        return Verdict.of((), missing)

    @property
    def framework(self) -> str | None:
        """None: a record certificate's method is the same whatever made the graphs."""
        return None

    def rejudged(self) -> Verdict:
        return RecordResult.judge(self.exit_code, self.ended, self.processes, self.detail)

    def topologies(self) -> dict[str, int]:
        """Topology hash -> instantiations over every process (graphs whose source graph
        was read)."""
        out: dict[str, int] = {}
        for g in self.recorded.graphs:
            if g.topology_hash is not None:
                out[g.topology_hash] = out.get(g.topology_hash, 0) + 1
        return out

    def topologies_by_process(self) -> dict[str, tuple[int | None, ...]]:
        """Topology hash -> the pids that instantiated it, in process order (tensor-parallel
        ranks on their own GPUs instantiate the same topologies)."""
        out: dict[str, list[int | None]] = {}
        for p in self.processes:
            for g in p.recorded.graphs:
                pids = out.setdefault(g.topology_hash, []) if g.topology_hash else None
                if pids is not None and p.info.pid not in pids:
                    pids.append(p.info.pid)
        return {h: tuple(pids) for h, pids in out.items()}

    def to_json(self) -> JSONObject:
        head: JSONObject = {"program": list(self.program), "exit_code": self.exit_code,
                            "ended": self.ended.value, "detail": self.detail,
                            "wall_s": self.wall_s, "cupti_version": self.cupti_version}
        if self.legacy:
            return {**head, **legacy_to_json(self.processes[0])}
        return {**head, "collector": self.collector,
                "processes": [process_to_json(p) for p in self.processes],
                "overall": overall_to_json(self.recorded, len(self.processes))}

    @classmethod
    def from_json(cls, doc: Doc, verdict: Doc | None = None) -> RecordResult:
        program = tuple(as_strs(doc, "program"))
        if "processes" in doc:
            processes = tuple(process_from_json(p) for p in as_docs(doc, "processes"))
            collector = as_str(doc, "collector")
            if collector not in COLLECTORS:
                raise ValueError(f"'collector': expected one of {', '.join(COLLECTORS)}, got "
                                 f"{collector[:40]!r}")
        else:
            processes, collector = (legacy_process(doc, program),), "in-place"
        exit_code, ended = as_int(doc, "exit_code"), Ended(as_str(doc, "ended"))
        detail = as_opt_str(doc, "detail")
        return cls(program, exit_code, ended, as_float(doc, "wall_s"), processes,
                   as_int(doc, "cupti_version"), collector, detail,
                   verdict=Verdict.from_json(verdict) if verdict is not None
                   else cls.judge(exit_code, ended, processes, detail))


__all__ = ["COLLECTORS", "Ended", "GraphMemory", "RecordResult", "who"]
