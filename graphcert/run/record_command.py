"""`graphcert record -- COMMAND ARGS`: any command (a Python script, `python -m pkg`, a console
script, a native binary) run as its own process tree under the CUDA injection collector
(docs/record-streams.md), then read stream by stream and certified (graphcert.run.record_run).

The command is checked before anything runs, as a shell would find it: not found is exit 127,
found but not executable 126 (what `env`, `timeout` and a shell say, so wrapping a command in
`graphcert record` keeps the codes a CI script already reads). Once it runs, its exit code is
graphcert's: a signal that ended it is 128 + the signal's number.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from graphcert.errors import ExitStatus, GraphcertError, InputError, clip
from graphcert.kinds.record.result import Ended
from graphcert.recording.streamfields import STREAM_NAME

if TYPE_CHECKING:
    from graphcert.injection.build import Built

COLLECTOR_ENV = "CUDA_INJECTION64_PATH"  # the driver loads it in every process it initialises
RUN_DIR_ENV = "GRAPHCERT_RUN_DIR"  # where the collector writes one stream per process
NVTX_ENV = "NVTX_INJECTION64_PATH"  # NVTX's tool: libcupti, so MARKER records hear ranges
PRELOAD_ENV = "LD_PRELOAD"  # the exit hook: a process ending with _exit flushes first
NOT_FOUND, NOT_EXECUTABLE = ExitStatus.COMMAND_NOT_FOUND, ExitStatus.COMMAND_NOT_EXECUTABLE
POLL_S = 0.05
# The command runs in its own session: a closed terminal (SIGHUP) or Ctrl-\ (SIGQUIT) that
# reached graphcert alone would end it and leave the command's tree running.
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class CommandNotFound(GraphcertError):
    """The command cannot be run: 127 when not found, 126 when not executable."""

    exit_code = NOT_FOUND


@dataclass(frozen=True)
class Command:
    """The command as typed (`given`, the certificate's program) and as it runs (`argv`:
    a `.py` file first runs under this Python; `executable`: argv[0] resolved)."""

    given: tuple[str, ...]
    argv: tuple[str, ...]
    executable: str


def resolve_command(given: Sequence[str]) -> Command:
    """The command checked before anything runs: a path with a slash must exist and be
    executable, any other name is looked up on PATH; a `.py` file (or a leading `-m`) runs
    under sys.executable. CommandNotFound (127, 126) or InputError (nothing given)."""
    args = tuple(given)
    if not args:
        raise InputError("no command to record", hint="graphcert record -- python app.py ARGS")
    first = args[0]
    if first == "-m":  # `graphcert record -- -m pkg`: this Python's -m
        return Command(args, (sys.executable, *args), sys.executable)
    if first.endswith(".py"):
        if not Path(first).is_file():
            raise CommandNotFound(f"{clip(first)}: no such file",
                                  hint="check the path of the script")
        return Command(args, (sys.executable, *args), sys.executable)
    if "/" in first:
        path = Path(first)
        if not path.exists():
            raise CommandNotFound(f"{clip(first)}: no such file",
                                  hint="check the path of the command")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise CommandNotFound(f"{clip(first)}: not an executable file",
                                  hint=f"chmod +x {clip(first)}, or name its interpreter "
                                       "first: bash run.sh", exit_code=NOT_EXECUTABLE)
        return Command(args, args, first)
    found = shutil.which(first)
    if found is None:
        raise CommandNotFound(f"{clip(first)}: command not found",
                              hint="check the name, or give its path: ./server")
    return Command(args, args, found)


def other_tool(path: str) -> str:
    """What a foreign CUDA_INJECTION64_PATH probably belongs to, for the message."""
    low = path.lower()
    if "nsys" in low or "nsight-systems" in low or "nsight_systems" in low:
        return "Nsight Systems"
    if "ncu" in low or "nsight-compute" in low or "nsight_compute" in low:
        return "Nsight Compute"
    return f"another tool ({Path(path).name})"


def collector_env(base: Mapping[str, str], *, collector: Path, exit_hook: Path,
                  libcupti: Path, run_dir: Path) -> tuple[dict[str, str], str | None]:
    """The command's environment: `base` with the collector, the run folder, the exit hook
    preloaded and NVTX routed to libcupti; and why NVTX ranges cannot be heard (None: they
    can). InputError when another tool already injects into CUDA."""
    current = base.get(COLLECTOR_ENV)
    if current and Path(current).resolve() != collector.resolve():
        raise InputError(f"{COLLECTOR_ENV} is already set to {clip(current)}: "
                         f"{other_tool(current)} injects into CUDA, and the driver loads one "
                         "injection library only",
                         hint=f"unset {COLLECTOR_ENV}, or run graphcert record outside that tool")
    env = dict(base)
    env[COLLECTOR_ENV] = str(collector)
    env[RUN_DIR_ENV] = str(run_dir)
    preload = base.get(PRELOAD_ENV, "")
    env[PRELOAD_ENV] = f"{exit_hook}:{preload}" if preload else str(exit_hook)
    nvtx, unavailable = base.get(NVTX_ENV), None
    if nvtx and nvtx != str(libcupti):
        unavailable = f"NVTX goes to another tool ({NVTX_ENV}={clip(nvtx)})"
    else:
        env[NVTX_ENV] = str(libcupti)
    return env, unavailable


@dataclass(frozen=True)
class Finished:
    """How the command's own process ended: its pid, graphcert's exit code (128 + the
    signal's number for a signal), how, and the signals graphcert forwarded to its group."""

    pid: int
    exit_code: int
    ended: Ended
    wall_s: float
    forwarded: tuple[int, ...] = ()
    signal_name: str | None = None  # the signal that ended it, if one did
    outlived: frozenset[int] = frozenset()  # processes with a stream still running after


def ended_by(returncode: int, forwarded: Sequence[int]) -> tuple[int, Ended, str | None]:
    """Popen's returncode as (exit code, how, the signal's name): -N is 128 + N; SIGINT
    is interrupted, SIGTERM terminated, any other signal killed. A command that caught a
    forwarded SIGINT or SIGTERM and exited 130 or 143 itself ended the same way."""
    if returncode < 0:
        sig = -returncode
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        how: dict[int, Ended] = {signal.SIGINT: Ended.INTERRUPTED,
                                 signal.SIGTERM: Ended.TERMINATED}
        return 128 + sig, how.get(sig, Ended.KILLED), name
    if returncode == 128 + signal.SIGINT and signal.SIGINT in forwarded:
        return returncode, Ended.INTERRUPTED, None
    if returncode == 128 + signal.SIGTERM and signal.SIGTERM in forwarded:
        return returncode, Ended.TERMINATED, None
    return returncode, Ended.EXIT, None


class Forwarder:
    """SIGINT, SIGTERM, SIGHUP and SIGQUIT passed on to the command's process group, each
    noted; one that came before the command had a pid is passed on as soon as it has one."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.forwarded: list[int] = []
        self._unsent: list[int] = []

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.forwarded.append(signum)
        if self.pid is None:
            self._unsent.append(signum)
        else:
            self._send(signum)

    def started(self, pid: int) -> None:
        """The command's pid (its process group's id): signals go there from now on."""
        self.pid = pid
        while self._unsent:  # a handler running here sees the pid and sends its own
            self._send(self._unsent.pop(0))

    def _send(self, signum: int) -> None:
        assert self.pid is not None
        with _gone_is_fine():
            os.killpg(self.pid, signum)


@contextmanager
def forwarding(forward: Forwarder) -> Iterator[None]:
    """While the body runs (main thread), the FORWARDED signals go to `forward`; every Ctrl-C
    forwards again. The command runs in its own session, so the terminal's Ctrl-C reaches
    graphcert only."""
    try:
        previous = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    except ValueError:  # not the main thread: signals stay where they are
        yield
        return
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextmanager
def _gone_is_fine() -> Iterator[None]:
    try:
        yield
    except (ProcessLookupError, PermissionError):
        pass


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks (/proc/<pid>/stat field 22), None when no
    such process is alive (gone, or a zombie: it has ended and waits to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # after the command name, which may hold ")"
    if not fields or fields[0] in ("Z", "X"):
        return None
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def streams_alive(run_dir: Path, *, skip: int | None = None) -> frozenset[int]:
    """The pids whose stream is in `run_dir` and which still run: the same pid and start
    time as the stream's name (a reused pid is another process)."""
    alive = set()
    for path in run_dir.glob("proc-*.jsonl"):
        m = STREAM_NAME.fullmatch(path.name)  # proc-<pid>-<start>[-e<n>].jsonl
        if m is None or int(m[1]) == skip:
            continue
        if start_time(int(m[1])) == int(m[2]):
            alive.add(int(m[1]))
    return frozenset(alive)


def wait_for_streams(run_dir: Path, grace: float, *, skip: int | None = None,
                     clock: Callable[[], float] = time.monotonic) -> frozenset[int]:
    """Wait up to `grace` seconds for the processes that wrote streams to end; those still
    running then (the command's own pid `skip` left out)."""
    deadline = clock() + grace
    alive = streams_alive(run_dir, skip=skip)
    while alive and clock() < deadline:
        time.sleep(POLL_S)
        alive = streams_alive(run_dir, skip=skip)
    return alive


def run_command(command: Command, env: Mapping[str, str], *, run_dir: Path | None = None,
                grace: float = 0.0) -> Finished:
    """Start the command in its own session (stdin, stdout, stderr inherited), wait for its
    process, then (with `run_dir`) up to `grace` seconds for the other processes that wrote
    streams there; the FORWARDED signals go to its process group all the while."""
    forward = Forwarder()
    with forwarding(forward):
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(list(command.argv), executable=command.executable,
                                    env=dict(env), start_new_session=True)
        except OSError as exc:  # an ELF for another machine, a script without #!
            raise CommandNotFound(f"{clip(command.given[0])}: cannot run: "
                                  f"{exc.strerror or exc}",
                                  hint="check that it is a program for this machine",
                                  exit_code=NOT_EXECUTABLE) from None
        forward.started(proc.pid)
        returncode = proc.wait()
        wall = time.perf_counter() - start
        outlived = (frozenset() if run_dir is None else
                    wait_for_streams(run_dir, grace, skip=proc.pid))
    code, how, name = ended_by(returncode, forward.forwarded)
    return Finished(proc.pid, code, how, wall, tuple(forward.forwarded), name, outlived)


def make_run_dir(keep: Path | None) -> Path:
    """A fresh run folder: in the system's temp folder, or under `keep` (kept after)."""
    if keep is None:
        return Path(tempfile.mkdtemp(prefix="graphcert-run-"))
    from graphcert.fileio import ensure_writable_dir

    ensure_writable_dir(keep, "--keep-streams folder")
    return Path(tempfile.mkdtemp(prefix="run-", dir=keep)).resolve()


def build_collector() -> Built:
    """The collector, its exit hook and libcupti (graphcert.injection.build, cached);
    CollectorUnavailable (exit 2, one line) when it cannot be built."""
    from graphcert.injection.build import build

    return build()
