"""The worker protocol: part of a run in a child process, typed both ways.

A worker is `python -m graphcert.worker --events FD --reply FD` (graphcert/worker.py), a fresh
process (fork + exec, never a fork of a process holding a CUDA context). Its parent writes one
JSON job on its stdin: a `CommandJob` (one GPU of a several-GPU run, graphcert.run.fleet) or a
`BenchJob` (bench in a fresh context, graphcert.run.fresh). The worker sends progress events
as JSON lines on the events pipe and, last, its `Reply` (exit status, typed error, typed
result) on the reply pipe. Its stdout and stderr carry only what a command prints for the
user; nothing is parsed out of them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

from graphcert.cert.results.fleet import EventSink, ProgressEvent, WorkerError
from graphcert.errors import GraphcertError
from graphcert.fileio import parse_json
from graphcert.jsontypes import (
    Doc,
    JSONObject,
    as_doc,
    as_json_object,
    as_object,
    as_opt_doc,
    to_int,
)

if TYPE_CHECKING:
    from graphcert.run.fresh import BenchJob


# A command parameter's value as it travels in a job: what click parsed, with paths as text
# and a variadic argument as a tuple (the worker converts it again, as its parser would).
ParamValue = str | int | float | bool | tuple[str, ...] | None


@dataclass(frozen=True)
class CommandJob:
    """Run one graphcert command on one GPU: the command's name and its parameters as the
    parent parsed them (without --device), the device, how certificates are named (True:
    with the GPU's short UUID; None: as $GRAPHCERT_CERT_NAME says), whether the parent wants
    progress events, and the --signing-key-file given (None: the variables decide)."""

    command: str
    params: Mapping[str, ParamValue]
    device: int
    uuid_names: bool | None = None
    progress: bool = False
    key_file: str | None = None

    def to_json(self) -> JSONObject:
        return {"job": "command", "command": self.command,
                "params": {k: list(v) if isinstance(v, tuple) else v
                           for k, v in self.params.items()},
                "device": self.device, "uuid_names": self.uuid_names,
                "progress": self.progress, "key_file": self.key_file}

    @classmethod
    def from_json(cls, doc: Doc) -> CommandJob:
        names, key = doc.get("uuid_names"), doc.get("key_file")
        params = {str(k): _param(k, v) for k, v in as_doc(doc, "params").items()}
        return cls(str(doc["command"]), params, to_int(doc, "device"),
                   bool(names) if names is not None else None, bool(doc.get("progress")),
                   str(key) if key is not None else None)


def _param(name: str, value: object) -> ParamValue:
    """A parameter's value as the parent wrote it (CommandJob.to_json): a scalar, or a
    variadic argument's list, read back as a tuple of text."""
    if isinstance(value, list):
        return tuple(str(x) for x in value)
    if value is None or isinstance(value, (str, int, float)):  # a bool is an int
        return value
    raise TypeError(f"parameter {name!r}: expected a scalar or an array, "
                    f"got {type(value).__name__}")


def job_from_json(doc: Doc) -> CommandJob | BenchJob:
    """The job a parent sent (its "job" key says which kind)."""
    kind = doc.get("job")
    if kind == "command":
        return CommandJob.from_json(doc)
    if kind == "bench":
        from graphcert.run.fresh import BenchJob

        return BenchJob.from_json(doc)
    raise ValueError(f"not a worker job: {kind!r}")


@dataclass(frozen=True)
class Reply:
    """What a worker says when it ends: its exit status, why it failed (None: it did not,
    or it failed only as a verdict does), and its result (a bench job's typed result as
    {"results", "verdict"}, read back with BenchResult.from_json; None for a command)."""

    exit_status: int
    error: WorkerError | None = None
    result: JSONObject | None = None

    def to_json(self) -> JSONObject:
        return {"exit_status": self.exit_status,
                "error": self.error.to_json() if self.error is not None else None,
                "result": dict(self.result) if self.result is not None else None}

    @classmethod
    def from_json(cls, doc: Doc) -> Reply:
        error, result = as_opt_doc(doc, "error"), as_opt_doc(doc, "result")
        return cls(to_int(doc, "exit_status"),
                   WorkerError.from_json(error) if error is not None else None,
                   as_json_object(result, "result") if result is not None else None)


# --- the parent's side ------------------------------------------------------------------------

def worker_command() -> list[str]:
    """How a worker starts: this Python and graphcert's worker entry point (tests put a
    synthetic worker here)."""
    return [sys.executable, "-m", "graphcert.worker"]


@dataclass(frozen=True)
class Finished:
    """A worker that ended: its exit code (negative: killed by that signal), what it printed
    on stdout, its stderr lines, and its reply (None: it wrote none, as a process that
    crashed or was killed)."""

    exit_code: int
    stdout: str
    messages: tuple[str, ...]
    reply: Reply | None


class WorkerProcess:
    """One running worker: its job sent, its pipes drained by threads as it runs (a full
    pipe would block it), its events passed on as they come."""

    def __init__(self, proc: subprocess.Popen[str], events: int, reply: int,
                 on_event: EventSink | None):
        self.proc = proc
        self._stdout: list[str] = []
        self._lines: list[str] = []
        self._reply: list[str] = []
        assert proc.stdout is not None and proc.stderr is not None
        stdout, stderr = proc.stdout, proc.stderr
        self._threads = [
            threading.Thread(target=lambda: self._stdout.append(stdout.read()), daemon=True),
            threading.Thread(target=_lines, args=(stderr, self._lines), daemon=True),
            threading.Thread(target=_events, args=(events, on_event), daemon=True),
            threading.Thread(target=_read_all, args=(reply, self._reply), daemon=True)]
        for t in self._threads:
            t.start()

    @classmethod
    def start(cls, job: CommandJob | BenchJob, *, env: Mapping[str, str] | None = None,
              on_event: EventSink | None = None,
              started: Callable[[subprocess.Popen[str]], None] | None = None
              ) -> WorkerProcess:
        """Start a worker on `job` (OSError when it cannot start). `started(proc)` runs
        before the job is sent, so a caller can stop it at once."""
        events_r, events_w = os.pipe()
        reply_r, reply_w = os.pipe()
        try:
            argv = [*worker_command(), "--events", str(events_w), "--reply", str(reply_w)]
            proc = subprocess.Popen(argv, env=dict(env) if env is not None else None,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, pass_fds=(events_w, reply_w),
                                    text=True, encoding="utf-8", errors="replace")
        except BaseException:
            for fd in (events_r, reply_r):
                os.close(fd)
            raise
        finally:  # the worker holds the write ends now: EOF when it ends
            os.close(events_w)
            os.close(reply_w)
        worker = cls(proc, events_r, reply_r, on_event)
        if started is not None:
            started(proc)
        assert proc.stdin is not None
        try:
            proc.stdin.write(json.dumps(job.to_json()))
            proc.stdin.flush()
        except OSError:  # it ended before reading its job: its exit code says how
            pass
        finally:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        return worker

    def wait(self, timeout: float | None = None) -> Finished:
        """Wait for the worker to end (subprocess.TimeoutExpired after `timeout` seconds,
        the worker still running) and collect what it said."""
        return self._collect(self.proc.wait(timeout))

    def kill(self) -> None:
        """End the worker now, reap it and close its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
        self._collect(self.proc.wait())

    def _collect(self, code: int) -> Finished:
        """What the worker that ended with `code` said, once its pipes are drained."""
        for t in self._threads:
            t.join()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return Finished(code, "".join(self._stdout), tuple(self._lines),
                        _reply("".join(self._reply)))


def _lines(stream: IO[str], into: list[str]) -> None:
    for raw in stream:
        into.append(raw.rstrip("\n"))


def _read_all(fd: int, into: list[str]) -> None:
    with open(fd, encoding="utf-8", errors="replace") as stream:
        into.append(stream.read())


def _events(fd: int, on_event: EventSink | None) -> None:
    with open(fd, encoding="utf-8", errors="replace") as stream:
        for line in stream:
            if on_event is None or not line.strip():
                continue
            # A bad line or a failing display must not end this reader: the worker would
            # fill the pipe and block, and the parent wait on it for ever.
            try:
                on_event(ProgressEvent.from_json(as_object(parse_json(line))))
            except Exception:
                pass


def _reply(text: str) -> Reply | None:
    """The reply a worker wrote, None when it wrote none (or not a whole one: killed)."""
    if not text.strip():
        return None
    try:
        return Reply.from_json(as_object(parse_json(text)))
    except (ValueError, KeyError, TypeError):  # JSONProblem is a ValueError
        return None


# --- the worker's side ------------------------------------------------------------------------

# Runs a command job's command (graphcert.worker: the command line's own) with its events
# sink; returns the exit status, raises GraphcertError for the reply's typed error.
RunCommand = Callable[[CommandJob, EventSink | None], int]


def serve(argv: Sequence[str], run_command: RunCommand) -> int:
    """The worker: read the job on stdin, run it, send its events and its reply; returns
    the exit status. A GraphcertError is the reply's typed error; anything else is a crash
    (a traceback on stderr and no reply), as in any Python process."""
    parser = argparse.ArgumentParser(prog="python -m graphcert.worker")
    parser.add_argument("--events", type=int, required=True)
    parser.add_argument("--reply", type=int, required=True)
    fds = parser.parse_args(list(argv))
    job = job_from_json(as_object(parse_json(sys.stdin.read())))
    with open(fds.events, "w", encoding="utf-8") as channel:
        def send(event: ProgressEvent) -> None:
            channel.write(json.dumps(event.to_json()) + "\n")
            channel.flush()

        try:
            if isinstance(job, CommandJob):
                reply = Reply(run_command(job, send if job.progress else None))
            else:
                from graphcert.run.fresh import run_bench_job

                reply = Reply(0, result=run_bench_job(job))
        except GraphcertError as exc:
            reply = Reply(int(exc.exit_code), WorkerError.of(exc))
    with open(fds.reply, "w", encoding="utf-8") as out:
        out.write(json.dumps(reply.to_json()))
    return reply.exit_status
