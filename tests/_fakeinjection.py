"""SYNTHETIC stand-ins for `graphcert record -- COMMAND` on a machine without CUDA: no
collector is built and nothing is injected. Each command the tests run is a small Python
script that writes a SYNTHETIC stream for its own process (docs/record-streams.md: a
`process` line first, an `end` line at exit, an `error` line when CUPTI was "refused"), so
the runner's whole path (spawn, signals, outlived processes, exit codes, the reader, the
certificate written) runs for real; only the collector's build is a stand-in."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from graphcert.errors import GraphcertError

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


@dataclass
class Made:
    """What record_run.make_result was given (it is spied on, not replaced)."""

    calls: list[dict[str, Any]] = field(default_factory=list)


def spy_make_result(made: Made) -> Any:
    """record_run.make_result itself, noting what it was given for the tests to read."""
    import graphcert.run.record_run as rr

    real = rr.make_result

    def make(command: Any, finished: Any, processes: Any, cupti_version: int) -> Any:
        made.calls.append({"processes": processes, "finished": finished,
                           "cupti_version": cupti_version, "command": command})
        return real(command, finished, processes, cupti_version)
    return make


class NoCompiler(GraphcertError):
    """Stands in for graphcert.injection.build.CollectorUnavailable (exit 2)."""


def install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *,
            build_error: BaseException | None = None) -> Made:
    """The fakes in place: build() returns paths (the exit hook: libc, harmless to
    preload), make_result is spied on, the environment is _certfactory's synthetic one."""
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
    monkeypatch.setattr(rr, "make_result", spy_make_result(made))
    monkeypatch.setattr(env, "environment", lambda device, git: synthetic_environment())
    for name in ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"):
        monkeypatch.delenv(name, raising=False)
    return made
