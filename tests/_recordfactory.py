"""SYNTHETIC record results for tests: processes with made-up pids, argv and GPU UUIDs
around a Recorded (an analysed synthetic stream), judged as graphcert would judge them."""

from __future__ import annotations

from collections.abc import Sequence

from graphcert.kinds.record.result import Ended, RecordResult
from graphcert.recording import Recorded
from graphcert.recording.processes import (
    GpuSeen,
    GraphMemory,
    ProcessEnded,
    ProcessInfo,
    ProcessRecorded,
)

MEMORY = GraphMemory(1, 2, 3, 4)  # SYNTHETIC graph memory, bytes


def synthetic_process(recorded: Recorded, pid: int = 4242, *, ppid: int = 4200,
                      argv: Sequence[str] = ("python", "worker.py"), gpu: int | None = 0,
                      ended: ProcessEnded = ProcessEnded.EXIT, exit_code: int | None = None,
                      problems: Sequence[str] = (),
                      memory: GraphMemory | None = MEMORY) -> ProcessRecorded:
    """One SYNTHETIC process (its GPU's UUID made up from its ordinal)."""
    gpus = () if gpu is None else (GpuSeen(gpu, f"GPU-synthetic-{gpu:04d}", "Synthetic GPU"),)
    info = ProcessInfo(pid, ppid, tuple(argv), gpus, ended, exit_code, tuple(problems))
    return ProcessRecorded(info, recorded, () if memory is None else (memory,),
                           None if memory is not None else "no context on a GPU")


def synthetic_run(processes: Sequence[ProcessRecorded], *,
                  program: Sequence[str] = ("python", "serve_synthetic.py"), exit_code: int = 0,
                  ended: Ended = Ended.EXIT, collector: str = "injection",
                  detail: str | None = None) -> RecordResult:
    """A SYNTHETIC run of `processes`, its verdict judged."""
    procs = tuple(processes)
    return RecordResult(tuple(program), exit_code, ended, 1.5, procs, 13040, collector, detail,
                        verdict=RecordResult.judge(exit_code, ended, procs, detail))


def in_place(recorded: Recorded, program: Sequence[str] = ("serve_synthetic.py",), *,
             exit_code: int = 0, ended: Ended = Ended.EXIT,
             memory: GraphMemory | None = MEMORY) -> RecordResult:
    """A SYNTHETIC in-place recording (graphcert.record()): one process, this shape."""
    proc = synthetic_process(recorded, argv=program, ended=ProcessEnded.IN_PLACE,
                             exit_code=exit_code, memory=memory)
    return synthetic_run((proc,), program=program, exit_code=exit_code, ended=ended,
                         collector="in-place")
