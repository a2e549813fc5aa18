"""SYNTHETIC stand-ins for `graphcert record -- COMMAND` on a machine without CUDA: no
collector is built and nothing is injected. Each command the tests run is a small Python
script that writes a SYNTHETIC stream for its own process (docs/record-streams.md: a
`process` line first, an `end` line at exit, an `error` line when CUPTI was "refused"), so
the runner's whole path (spawn, signals, outlived processes, exit codes, the certificate
written) runs for real. The reader and the certificate are stand-ins too (`fake_read_run`,
`fake_make_result`): the real ones live in other modules and are tested there."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from graphcert.errors import GraphcertError
from graphcert.recording import Recording, analyse
from graphcert.recording.processes import (
    GpuSeen,
    ProcessEnded,
    ProcessInfo,
    ProcessRecorded,
)

# The top of every SYNTHETIC command: `stream(...)` writes this process's stream.
PRELUDE = '''\
import atexit, json, os, sys, time
def _start(pid):
    s = open(f"/proc/{pid}/stat").read()
    return int(s[s.rfind(")") + 2:].split()[19])
def stream(refused=False):
    """SYNTHETIC: what the collector would write for this process."""
    pid = os.getpid()
    path = os.path.join(os.environ["GRAPHCERT_RUN_DIR"], f"proc-{pid}-{_start(pid)}.jsonl")
    f = open(path, "a", buffering=1)
    argv = open("/proc/self/cmdline").read().rstrip("\\0").split("\\0")
    f.write(json.dumps({"t": "process", "pid": pid, "ppid": os.getppid(), "argv": argv,
                        "exe": sys.executable, "wall_ns": 0, "at": 0,
                        "cupti_version": 130001, "collector": "synthetic"}) + "\\n")
    f.write(json.dumps({"t": "device", "ordinal": 0, "uuid": "GPU-synthetic",
                        "name": "SYNTHETIC GPU"}) + "\\n")
    if refused:
        f.write(json.dumps({"t": "error", "what": "cuptiSubscribe",
                            "result": "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED",
                            "detail": "another tool holds CUPTI"}) + "\\n")
    atexit.register(lambda: f.write(json.dumps({"t": "end", "how": "exit", "code": None,
                                                 "at": 1}) + "\\n"))
'''


def script(folder: Path, body: str, name: str = "synthetic_app.py") -> Path:
    """A SYNTHETIC command: the prelude, then `body`."""
    path = folder / name
    path.write_text(PRELUDE + body, encoding="utf-8")
    return path


@dataclass(frozen=True)
class FakeStream:
    """Stands in for graphcert.recording.streams.ProcessStream."""

    process: ProcessRecorded
    recording: Recording
    cupti_version: int
    collector: str
    path: Path


def fake_read_run(folder: Path, *, outlived: frozenset[int], exit_codes: Any,
                  nvtx_unavailable: str | None) -> tuple[FakeStream, ...]:
    """Reads the SYNTHETIC streams' process, device, error and end lines only."""
    out = []
    for path in sorted(folder.glob("proc-*.jsonl")):
        lines = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
        head = lines[0]
        gpus = tuple(GpuSeen(ln["ordinal"], ln["uuid"], ln["name"])
                     for ln in lines if ln["t"] == "device")
        problems = tuple(f"CUPTI refused: {ln['what']} returned {ln['result']} "
                         f"({ln['detail']}): nothing of this process was recorded"
                         for ln in lines if ln["t"] == "error")
        ends = [ln for ln in lines if ln["t"] == "end"]
        pid = head["pid"]
        ended = (ProcessEnded.OUTLIVED if pid in outlived else
                 ProcessEnded.EXIT if ends else ProcessEnded.KILLED)
        rec = Recording(nvtx_unavailable=nvtx_unavailable)
        info = ProcessInfo(pid, head["ppid"], tuple(head["argv"]), gpus, ended,
                           exit_codes.get(pid), problems)
        out.append(FakeStream(ProcessRecorded(info, analyse(rec)), rec,
                              head["cupti_version"], head["collector"], path))
    return tuple(out)


@dataclass
class Made:
    """What fake_make_result was given, for the tests to read."""

    calls: list[dict[str, Any]] = field(default_factory=list)


def fake_make_result(made: Made) -> Any:
    """A stand-in for record_run.make_result: today's single-process RecordResult (so the
    certificate written is a valid one), noting the processes it was given."""
    from graphcert.kinds.record.result import RecordResult

    def make(command: Any, finished: Any, processes: Any, cupti_version: int) -> Any:
        made.calls.append({"processes": processes, "finished": finished,
                           "cupti_version": cupti_version, "command": command})
        recorded = analyse(Recording())
        return RecordResult(command.given, finished.exit_code, finished.ended,
                            finished.wall_s, recorded, cupti_version,
                            verdict=RecordResult.judge(finished.exit_code, finished.ended,
                                                       recorded))
    return make


class NoCompiler(GraphcertError):
    """Stands in for graphcert.injection.build.CollectorUnavailable (exit 2)."""


def install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *,
            build_error: BaseException | None = None) -> Made:
    """The fakes in place: build() returns paths (the exit hook: libc, harmless to
    preload), the reader and the result are the stand-ins above, the environment is
    _certfactory's synthetic one."""
    from _certfactory import environment as synthetic_environment

    import graphcert.run.environment as env
    import graphcert.run.record_command as rc
    import graphcert.run.record_run as rr

    def build() -> Any:
        if build_error is not None:
            raise build_error
        return SimpleNamespace(collector=tmp_path / "libsynthetic_collector.so",
                               exit_hook=Path("libc.so.6"),
                               libcupti=tmp_path / "libcupti.so.13")

    made = Made()
    monkeypatch.setattr(rc, "build_collector", build)
    monkeypatch.setattr(rr, "read_streams", fake_read_run)
    monkeypatch.setattr(rr, "make_result", fake_make_result(made))
    monkeypatch.setattr(env, "environment", lambda device, git: synthetic_environment())
    for name in ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"):
        monkeypatch.delenv(name, raising=False)
    return made
