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
from dataclasses import dataclass
from enum import Enum

from graphcert.recording.analysis import Recorded


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
    # a simple version for the certificate's tests (all of it inside this body, imports
    # too); the streams worktree's merge replaces it
    from dataclasses import replace

    from graphcert.recording.analysis import (
        MAX_EAGER_GROUPS,
        Churn,
        Coverage,
        EagerGroup,
        GraphRow,
    )
    from graphcert.recording.regions import MAX_REGIONS, EagerRegion, Regions

    def summed(cs: Sequence[Coverage]) -> Coverage:
        return Coverage(sum(c.graph_kernels for c in cs), sum(c.eager_kernels for c in cs),
                        sum(c.graph_ns for c in cs), sum(c.eager_ns for c in cs))

    def by_name(pairs: Sequence[tuple[str, int, int]], limit: int) -> list[tuple[str, int, int]]:
        total: dict[str, list[int]] = {}
        for name, count, ns in pairs:
            total.setdefault(name, [0, 0])
            total[name][0] += count
            total[name][1] += ns
        order = sorted(total, key=lambda n: (-total[n][0], n))[:limit]
        return [(n, total[n][0], total[n][1]) for n in order]

    graphs: list[GraphRow] = []
    churn: list[Churn] = []
    for p in processes:
        base = len(graphs)
        graphs += [replace(g, index=base + g.index, pid=p.info.pid) for g in p.recorded.graphs]
        churn += [replace(c, rows=tuple(base + r for r in c.rows)) for c in p.recorded.churn]
    steady = [p.recorded.steady for p in processes if p.recorded.steady is not None]
    eager = by_name([(e.name, e.count, e.total_ns) for p in processes
                     for e in p.recorded.steady_eager], MAX_EAGER_GROUPS)
    regions = [p.recorded.regions for p in processes if p.recorded.regions is not None]
    merged = None if not regions else Regions(
        sum(r.ranges for r in regions),
        tuple(EagerRegion(*g) for g in by_name([(g.region, g.count, g.total_ns)
                                                for r in regions for g in r.groups],
                                               MAX_REGIONS)),
        # unavailable only where no process had a range to attribute by
        None if any(r.unavailable is None for r in regions) else regions[0].unavailable)
    return Recorded(tuple(graphs), summed([p.recorded.overall for p in processes]),
                    summed(steady) if steady else None,
                    tuple(EagerGroup(*e) for e in eager), tuple(churn),
                    sum(p.recorded.dropped_records for p in processes), merged)


__all__ = ["GpuSeen", "GraphMemory", "ProcessEnded", "ProcessInfo", "ProcessRecorded", "merge"]
