"""`graphcert record -- COMMAND`: check, build the collector, run the command's process tree
(record_command), read one stream per process and certify the run: one certificate and one
snapshots folder (`<certificate stem>.snapshots/`) holding each distinct topology and shape
of every process once, each graph row naming its file.

What the reader (graphcert.recording.streams.read_run), the collector
(graphcert.injection.build) and the certificate (RecordResult) are is reached through
`read_streams`, `record_command.build_collector` and `make_result` only.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphcert.cert.document import certificate_filename
from graphcert.errors import single_line
from graphcert.kinds.record.result import RecordResult
from graphcert.options import Options
from graphcert.recording import Recording, analyse
from graphcert.recording.processes import (
    GpuSeen,
    ProcessEnded,
    ProcessInfo,
    ProcessRecorded,
)
from graphcert.recording.streams import ProcessStream, read_run
from graphcert.run.record_command import (
    Command,
    Finished,
    collector_env,
    make_run_dir,
    resolve_command,
    run_command,
)


@dataclass(frozen=True)
class CommandRun:
    """A recorded command: the result, the certificate written (None: not asked for), the
    run folder kept (None: removed), and the one-line notes about its processes (outlived,
    killed, CUPTI refused) the command line prints to stderr."""

    result: RecordResult
    certificate: Path | None
    streams: Path | None
    notes: tuple[str, ...] = ()


def read_streams(run_dir: Path, *, outlived: frozenset[int], exit_codes: Mapping[int, int],
                 nvtx_unavailable: str | None) -> tuple[ProcessStream, ...]:
    """Each process's stream read and analysed, in the order the processes started."""
    return read_run(run_dir, outlived=outlived, exit_codes=exit_codes,
                    nvtx_unavailable=nvtx_unavailable)


def with_command_process(processes: tuple[ProcessRecorded, ...], command: Command,
                         finished: Finished) -> tuple[ProcessRecorded, ...]:
    """The run's processes with the command's own first: a process that never initialised
    CUDA wrote no stream (a server's front end that spawns its engine), yet it is the one
    the user started, and how it ended is known (the runner waited for it)."""
    if any(p.info.pid == finished.pid for p in processes):
        return processes
    ended = ProcessEnded.KILLED if finished.signal_name else ProcessEnded.EXIT
    info = ProcessInfo(finished.pid, os.getpid(), tuple(command.argv), (), ended,
                       finished.exit_code)
    return (ProcessRecorded(info, analyse(Recording())), *processes)


def make_result(command: Command, finished: Finished, processes: tuple[ProcessRecorded, ...],
                cupti_version: int) -> RecordResult:
    """The record certificate's result for the run (the one place it is constructed)."""
    detail = (f"the command ended by {finished.signal_name}" if finished.signal_name
              else None)
    return RecordResult(
        tuple(command.given), finished.exit_code, finished.ended, finished.wall_s,
        processes, cupti_version, "injection", detail,
        verdict=RecordResult.judge(finished.exit_code, finished.ended, processes, detail))


def who(process: ProcessRecorded) -> str:
    """`pid 123: python worker.py`, the command line cut to a readable length."""
    line = single_line(" ".join(process.info.argv)) or "?"  # `python -c CODE` has newlines
    return f"pid {process.info.pid}: {line[:80]}{'…' if len(line) > 80 else ''}"


def notes_about(processes: Sequence[ProcessRecorded], command_pid: int,
                command_signal: str | None = None) -> tuple[str, ...]:
    """One line per thing to know about the run's processes (with_command_process's: the
    command's own among them, stream or none): those that outlived the command (together),
    each killed one (no end line; the command's own by `command_signal` when the runner saw
    it), each one whose CUPTI was refused or taken or whose stream had unreadable lines."""
    lines = []
    out = [p for p in processes if p.info.ended is ProcessEnded.OUTLIVED]
    if out:
        n = len(out)
        lines.append(f"{n} process{'es' if n > 1 else ''} outlived the command "
                     f"({', '.join(who(p) for p in out)}); "
                     f"{'their records end' if n > 1 else 'its record ends'} at "
                     f"{'their' if n > 1 else 'its'} last flush")
    for p in processes:
        if p.info.ended is ProcessEnded.KILLED:
            if p.info.pid == command_pid and command_signal:
                how = f"the command itself, by {command_signal}"
            else:
                how = ("the command itself, " if p.info.pid == command_pid else "") + \
                    "no end in its stream: SIGKILL or a crash"
            lines.append(f"{who(p)} was killed ({how}); its record ends at its last flush")
        for problem in p.info.problems:
            lines.append(f"{who(p)}: {problem}")
    return tuple(f"graphcert record: {line}" for line in lines)


def first_gpu(processes: Sequence[ProcessRecorded]) -> GpuSeen | None:
    """The GPU of the first process (in the run's order) that made a context on one."""
    return next((g for p in processes for g in p.info.gpus), None)


def _bare_uuid(uuid: str) -> str:
    return uuid.lower().removeprefix("gpu-")


def device_index(gpu: GpuSeen | None, fallback: int) -> int:
    """The index (as graphcert numbers devices here) of `gpu`, found by its UUID (a child's
    CUDA_VISIBLE_DEVICES may number it otherwise), else its own ordinal; `fallback`
    (--device) when no process used a GPU."""
    if gpu is None:
        return fallback
    try:
        from graphcert.cuda.device import device_count, device_info

        for index in range(device_count()):
            if _bare_uuid(device_info(index).uuid) == _bare_uuid(gpu.uuid):
                return index
    except Exception:  # noqa: BLE001 (no driver here: the stream's own ordinal)
        pass
    return gpu.ordinal


def identity_argv(given: Sequence[str]) -> tuple[str, ...]:
    """The command as program_identity reads it: without a leading Python interpreter, so
    `python app.py --x` and `app.py --x` are one workload (`app.py:__main__[args=--x]`)."""
    args = tuple(given)
    if len(args) > 1 and Path(args[0]).name.startswith("python") and \
            not args[0].endswith(".py"):
        return args[1:]
    return args


def with_source(program: Sequence[str], source: Path) -> tuple[str, ...]:
    """The program with `source` in place of what names it: the script or executable, or
    the module of `-m pkg` (both words), its arguments kept."""
    module = len(program) > 1 and program[0] == "-m"
    return (str(source), *(program[2:] if module else program[1:]))


def cuda_scale(api_version: int) -> int:
    """cuptiGetVersion's CUPTI_API_VERSION (13.4 update 1: 130401) on the scale the
    certificate's cupti_version has held since graphcert.record() and `profile` (CUDA's:
    13.4 -> 13040, graphcert.cupti.library.version); 0 for a number of another form (the
    CUPTI of CUDA 12 numbered its API 18, 20, ...)."""
    if api_version < 100000:
        return 0
    return api_version // 10000 * 1000 + api_version // 100 % 100 * 10


def cupti_version_of(streams: Sequence[ProcessStream]) -> int:
    """CUPTI's version as the collector saw it, else as this process loads it; CUDA's scale
    either way (13.4 -> 13040)."""
    for stream in streams:
        if stream.cupti_version and (version := cuda_scale(int(stream.cupti_version))):
            return version
    from graphcert.cupti.record import cupti_version

    return cupti_version()


def certify(command: Command, finished: Finished, streams: Sequence[ProcessStream], *,
            out_dir: Path | None, options: Options, device: int, source: Path | None = None
            ) -> tuple[RecordResult, Path | None]:
    """The result and, with `out_dir`, its certificate and snapshots written (atomic).
    `source`: the file that stands for the program in the certificate's workload reference
    (what the gate digests), in place of the script or executable."""
    from graphcert.run import environment
    from graphcert.run.record import name_snapshots, program_identity, write_snapshots

    processes = with_command_process(tuple(s.process for s in streams), command, finished)
    version = cupti_version_of(streams)
    if out_dir is None:
        return make_result(command, finished, processes, version), None
    env = environment.environment(device_index(first_gpu(processes), device), options.git)
    program = identity_argv(command.given)
    if source is not None:
        program = with_source(program, source)
    ref, name = program_identity(program)
    about = environment.Subject("record", environment.identity(ref, name, "record"), name)
    path = out_dir / certificate_filename("record", name,
                                          environment.gpu_label(env, options.uuid_names))
    files = write_snapshots((s.recording for s in streams), path.with_suffix(".snapshots"))
    processes = tuple(name_snapshots(p, files) for p in processes)
    result = make_result(command, finished, processes, version)
    return result, environment.write(result, out_dir, about, env, key=options.signing_key,
                                     uuid_names=options.uuid_names)


def record_command(argv: Sequence[str], *, out_dir: Path | None, options: Options,
                   device: int = 0, keep_streams: Path | None = None, grace: float = 5.0,
                   base_env: Mapping[str, str] | None = None, source: Path | None = None
                   ) -> CommandRun:
    """Check the command and the output folder, build the collector, run the command's
    tree under it, wait up to `grace` seconds for processes still writing streams, read
    the run and certify it (with `out_dir`). The run folder is removed unless kept."""
    from graphcert.fileio import ensure_writable_dir
    from graphcert.run.record_command import build_collector

    command = resolve_command(argv)
    if out_dir is not None:
        ensure_writable_dir(out_dir)
    built = build_collector()
    base = dict(os.environ if base_env is None else base_env)
    run_dir = make_run_dir(keep_streams)
    try:
        env, nvtx_unavailable = collector_env(base, collector=Path(built.collector),
                                              exit_hook=Path(built.exit_hook),
                                              libcupti=Path(built.libcupti), run_dir=run_dir)
        finished = run_command(command, env, run_dir=run_dir, grace=grace)
        streams = read_streams(run_dir, outlived=finished.outlived,
                               exit_codes={finished.pid: finished.exit_code},
                               nvtx_unavailable=nvtx_unavailable)
        processes = with_command_process(tuple(s.process for s in streams), command,
                                         finished)
        notes = notes_about(processes, finished.pid, finished.signal_name)
        result, cert = certify(command, finished, streams, out_dir=out_dir,
                               options=options, device=device, source=source)
    finally:
        if keep_streams is None:
            shutil.rmtree(run_dir, ignore_errors=True)
    return CommandRun(result, cert, run_dir if keep_streams is not None else None, notes)


__all__ = ["CommandRun", "certify", "cuda_scale", "cupti_version_of", "device_index",
           "first_gpu", "identity_argv", "make_result", "notes_about", "read_streams",
           "record_command", "with_source"]
