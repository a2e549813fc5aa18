"""A recorded run of many processes: each process's own analysis (what `graphcert record --
COMMAND` read from its stream, or the one process `graphcert.record()` recorded in place)
and their merge into the run's whole. Pure.

Steady state is each process's own (its first graph kernel on its own GPU's clock): one
process's warm-up is not another's steady state. The whole adds the processes' coverage,
lists every graph with its process, and keeps churn per process (TP ranks capturing the same
topology on their own GPUs are not churn).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum

from graphcert.recording.analysis import (
    MAX_EAGER_GROUPS,
    Churn,
    Coverage,
    EagerGroup,
    GraphRow,
    Recorded,
)
from graphcert.recording.regions import MAX_REGIONS, EagerRegion, Regions


class ProcessEnded(str, Enum):
    """How one process of the run ended, as its stream and the runner saw it."""

    EXIT = "exit"  # exit() or returned from main (the stream's end line, how "exit")
    EXIT_NOW = "_exit"  # _exit(status) (forked workers): the end line carries the status
    KILLED = "killed"  # gone without an end line: SIGKILL, a crash, or another abrupt end
    OUTLIVED = "outlived"  # still running when the command's own process had ended
    IN_PLACE = "in-place"  # recorded inside the program (graphcert.record()): see the run


@dataclass(frozen=True)
class GpuSeen:
    """A GPU a process made a CUDA context on."""

    ordinal: int
    uuid: str
    name: str


@dataclass(frozen=True)
class GraphMemory:
    """The driver's graph memory at the end (cuDeviceGetGraphMemAttribute), bytes."""

    used_current: int
    used_high: int
    reserved_current: int
    reserved_high: int


@dataclass(frozen=True)
class ProcessInfo:
    """Who a process was and how it ended. `exit_code` is known for the command's own
    process (the runner waited for it) and for a process that ended with _exit; else None.
    `problems`: what the collector could not do in it (CUPTI held by another tool, lines
    of its stream that could not be read), each one line. `pid` and `ppid` are None only for
    a certificate written before processes were recorded (its one process, read back from
    the single-process layout: who it was is not known, and 0 would be a real process)."""

    pid: int | None
    ppid: int | None
    argv: tuple[str, ...]
    gpus: tuple[GpuSeen, ...]
    ended: ProcessEnded
    exit_code: int | None = None
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProcessRecorded:
    """One process's analysis, with its graph memory at its end (None: `memory_reason`)."""

    info: ProcessInfo
    recorded: Recorded
    graph_memory: tuple[GraphMemory, ...] = ()  # one per GPU it used, in ordinal order
    memory_reason: str | None = None

    @property
    def launched_nothing(self) -> bool:
        """True when no kernel of this process ran (a front end, a tokenizer process)."""
        return not self.recorded.overall.kernels


def merge(processes: Sequence[ProcessRecorded]) -> Recorded:
    """The whole run: graphs of every process in process order (each row's `pid` set),
    coverage overall and in steady state summed over processes (steady: over those that
    have one), steady eager groups and NVTX regions merged by name, churn per process
    (rows renumbered into the merged graph list), dropped records summed."""
    # a simple version for the certificate's tests; the streams worktree's merge replaces it
    graphs: list[GraphRow] = []
    churn: list[Churn] = []
    steady: list[Coverage] = []
    eager: dict[str, list[int]] = {}
    regions: list[Regions] = []
    for p in processes:
        rec, base = p.recorded, len(graphs)
        graphs += [replace(g, index=base + g.index, pid=p.info.pid) for g in rec.graphs]
        churn += [replace(c, rows=tuple(base + r for r in c.rows)) for c in rec.churn]
        if rec.steady is not None:
            steady.append(rec.steady)
        for e in rec.steady_eager:
            eager.setdefault(e.name, [0, 0])
            eager[e.name][0] += e.count
            eager[e.name][1] += e.total_ns
        if rec.regions is not None:
            regions.append(rec.regions)
    order = sorted(eager, key=lambda n: (-eager[n][0], n))[:MAX_EAGER_GROUPS]
    return Recorded(tuple(graphs), _summed([p.recorded.overall for p in processes]),
                    _summed(steady) if steady else None,
                    tuple(EagerGroup(n, *eager[n]) for n in order), tuple(churn),
                    sum(p.recorded.dropped_records for p in processes),
                    _merged_regions(regions) if regions else None)


def _summed(cs: Sequence[Coverage]) -> Coverage:
    return Coverage(sum(c.graph_kernels for c in cs), sum(c.eager_kernels for c in cs),
                    sum(c.graph_ns for c in cs), sum(c.eager_ns for c in cs))


def _merged_regions(rs: Sequence[Regions]) -> Regions:
    """Regions by path over processes; unavailable only where no process had any range."""
    count: dict[str, list[int]] = {}
    for r in rs:
        for g in r.groups:
            count.setdefault(g.region, [0, 0])
            count[g.region][0] += g.count
            count[g.region][1] += g.total_ns
    order = sorted(count, key=lambda n: (-count[n][0], n))[:MAX_REGIONS]
    seen = [r for r in rs if r.unavailable is None]
    return Regions(sum(r.ranges for r in rs),
                   tuple(EagerRegion(n, *count[n]) for n in order),
                   None if seen else rs[0].unavailable)


__all__ = ["GpuSeen", "GraphMemory", "ProcessEnded", "ProcessInfo", "ProcessRecorded", "merge"]
