"""A recorded run of many processes: each process's own analysis (what `graphcert record --
COMMAND` read from its stream, or the one process `graphcert.record()` recorded in place)
and their merge into the run's whole. Pure.

Steady state is each process's own (its first graph kernel on its own GPU's clock): one
process's warm-up is not another's steady state. The whole adds the processes' coverage,
lists every graph with its process, and keeps churn per process (TP ranks capturing the same
topology on their own GPUs are not churn).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from graphcert.recording.analysis import (
    MAX_EAGER_GROUPS,
    Churn,
    Coverage,
    EagerGroup,
    GraphRow,
    Recorded,
    analyse,
)
from graphcert.recording.events import Recording
from graphcert.recording.regions import MAX_REGIONS, EagerRegion, Regions


class ProcessEnded(str, Enum):
    """How one process of the run ended, as its stream and the runner saw it."""

    EXIT = "exit"  # exit() or returned from main (the stream's end line, how "exit")
    EXIT_NOW = "_exit"  # _exit(status) (forked workers): the end line carries the status
    KILLED = "killed"  # gone without an end line: SIGKILL, a crash, or another abrupt end
    EXEC = "exec"  # replaced by exec: a later stream of the same process records the program
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


def process_recorded(info: ProcessInfo, recording: Recording,
                     graph_memory: Sequence[GraphMemory] = (),
                     memory_reason: str | None = None) -> ProcessRecorded:
    """One process's recording analysed (graphcert.recording.analysis.analyse)."""
    return ProcessRecorded(info, analyse(recording), tuple(graph_memory), memory_reason)


def _sum(parts: Iterable[Coverage]) -> Coverage:
    gk = ek = gns = ens = 0
    for c in parts:
        gk, ek, gns, ens = (gk + c.graph_kernels, ek + c.eager_kernels, gns + c.graph_ns,
                            ens + c.eager_ns)
    return Coverage(gk, ek, gns, ens)


def _by_name(groups: Iterable[tuple[str, int, int]], limit: int) -> list[tuple[str, int, int]]:
    """(name, count, ns) summed per name, most first (then by name), at most `limit`."""
    count: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    for name, n, ns in groups:
        count[name] += n
        total[name] += ns
    return [(n, count[n], total[n]) for n in sorted(count, key=lambda n: (-count[n], n))[:limit]]


def _regions(processes: Sequence[ProcessRecorded]) -> Regions | None:
    found = [r for p in processes if (r := p.recorded.regions) is not None]
    if not found:
        return None
    heard = [r for r in found if r.unavailable is None]
    if not heard:
        return Regions(0, (), found[0].unavailable)
    groups = _by_name(((g.region, g.count, g.total_ns) for r in heard for g in r.groups),
                      MAX_REGIONS)
    return Regions(sum(r.ranges for r in heard), tuple(EagerRegion(*g) for g in groups))


def merge(processes: Sequence[ProcessRecorded]) -> Recorded:
    """The whole run: graphs of every process in process order (each row's `pid` set),
    coverage overall and in steady state summed over processes (steady: over those that
    have one), steady eager groups and NVTX regions merged by name, churn per process
    (rows renumbered into the merged graph list), dropped records summed."""
    rows: list[GraphRow] = []
    churn: list[Churn] = []
    for p in processes:
        offset = len(rows)
        rows += [replace(r, index=offset + r.index, pid=p.info.pid) for r in p.recorded.graphs]
        churn += [replace(c, rows=tuple(offset + i for i in c.rows)) for c in p.recorded.churn]
    steady = [s for p in processes if (s := p.recorded.steady) is not None]
    eager = _by_name(((g.name, g.count, g.total_ns) for p in processes
                      for g in p.recorded.steady_eager), MAX_EAGER_GROUPS)
    return Recorded(tuple(rows), _sum(p.recorded.overall for p in processes),
                    _sum(steady) if steady else None, tuple(EagerGroup(*g) for g in eager),
                    tuple(churn), sum(p.recorded.dropped_records for p in processes),
                    _regions(processes))


__all__ = ["GpuSeen", "GraphMemory", "ProcessEnded", "ProcessInfo", "ProcessRecorded", "merge",
           "process_recorded"]
