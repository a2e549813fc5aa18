"""One worker process per GPU: `--device all` and `--device 0,2` on capture, verify and bench.

Each worker is `python -m graphcert <command> ... --device N`, a fresh process (fork + exec,
never a fork of a process holding a CUDA context), so GPUs run in parallel, a crash on one
GPU is that worker's failure, and each worker writes its own certificate. The parent only
lists the GPUs (cuInit, no context), starts the workers and collects what they say.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import IO

from graphcert.cert.results.fleet import (
    CERT_NAME_ENV,
    PROGRESS_ENV,
    PROGRESS_PREFIX,
    FleetResult,
    Gpu,
    WorkerOutcome,
)
from graphcert.errors import InputError

DEVICE_ENV = "GRAPHCERT_DEVICE"
STOP_WAIT_S = 5.0  # after Ctrl-C, how long a worker gets to end on SIGTERM before SIGKILL
ERROR_PREFIX = "graphcert: error: "
OnProgress = Callable[[Gpu, str, float], None]  # (gpu, "total" | "advance", units)


def list_gpus() -> list[Gpu]:
    """Every GPU the driver shows this process (CUDA_VISIBLE_DEVICES applies)."""
    from graphcert.cuda.device import device_count, device_info

    return [Gpu(i, info.name, info.uuid)
            for i in range(device_count()) for info in [device_info(i)]]


def select_gpus(indices: Sequence[int] | None, gpus: Sequence[Gpu]) -> list[Gpu]:
    """The GPUs named by `indices` (None: all). An unknown index is one line naming the
    devices there are (exit 2), before anything starts."""
    if indices is None:
        if not gpus:
            raise InputError("--device all: this machine shows no CUDA device",
                             hint="check `graphcert env` and CUDA_VISIBLE_DEVICES")
        return list(gpus)
    by_index = {g.index: g for g in gpus}
    unknown = [i for i in indices if i not in by_index]
    if unknown:
        there = ", ".join(f"{g.index} ({g.name})" for g in gpus) or "none"
        raise InputError(f"--device {','.join(map(str, indices))}: no device {unknown[0]} "
                         f"on this machine; devices: {there}",
                         hint="pick indices from `graphcert env`, or --device all")
    return [by_index[i] for i in indices]


def strip_device(args: Sequence[str]) -> list[str]:
    """`args` without any `--device X` / `--device=X` (the parent gives each worker its own)."""
    out: list[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
        elif arg == "--":
            out.extend(args[i:])
            break
        elif arg == "--device":
            skip = True
        elif not arg.startswith("--device="):
            out.append(arg)
    return out


def worker_argv(args: Sequence[str], gpu: Gpu, extra: Sequence[str] = ()) -> list[str]:
    """The worker's command line: this Python, graphcert, the user's arguments for one GPU.
    `extra` and --device go before any `--`: after it they would be the workload's."""
    ours = strip_device(args)
    cut = ours.index("--") if "--" in ours else len(ours)
    return [sys.executable, "-m", "graphcert", *ours[:cut], *extra,
            "--device", str(gpu.index), *ours[cut:]]


def worker_env(*, several: bool, progress_lines: bool,
               base: Mapping[str, str] | None = None,
               extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The worker's environment: the parent's, without $GRAPHCERT_DEVICE (--device decides);
    certificate names with the GPU's short UUID when several GPUs run."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k != DEVICE_ENV}
    if several:
        env[CERT_NAME_ENV] = "uuid"
    if progress_lines:
        env[PROGRESS_ENV] = "1"
    else:
        env.pop(PROGRESS_ENV, None)
    env.update(extra or {})
    return env


def _error_line(rc: int, lines: Sequence[str]) -> str | None:
    """The worker's one-line error: its `graphcert: error:` line, else its last words."""
    if rc == 0:
        return None
    for line in reversed(lines):
        if line.startswith(ERROR_PREFIX):
            return line[len(ERROR_PREFIX):].strip()
    if rc < 0:
        import signal

        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = str(-rc)
        return f"the worker was killed by {name}"
    last = next((ln.strip() for ln in reversed(lines) if ln.strip()), None)
    return f"exited with code {rc}" + (f": {last}" if last else "")


def _read_messages(stream: IO[str], gpu: Gpu, on_progress: OnProgress | None,
                   lines: list[str]) -> None:
    for raw in stream:
        line = raw.rstrip("\n")
        if line.startswith(PROGRESS_PREFIX):
            what, _, units = line[len(PROGRESS_PREFIX):].strip().partition(" ")
            if on_progress is not None:
                # A bad line or a failing display must not end this reader: the worker would
                # fill its stderr pipe and block, and the parent wait on it for ever.
                try:
                    on_progress(gpu, what, float(units))
                except Exception:
                    pass
        else:
            lines.append(line)


def run_worker(gpu: Gpu, argv: Sequence[str], env: Mapping[str, str], *,
               on_progress: OnProgress | None = None,
               started: Callable[[subprocess.Popen[str]], None] | None = None
               ) -> WorkerOutcome:
    """Run one worker to its end; what it printed, its exit code and error."""
    begin = time.perf_counter()
    try:
        proc = subprocess.Popen(list(argv), env=dict(env), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                encoding="utf-8", errors="replace")
    except OSError as exc:
        return WorkerOutcome(gpu, 127, 0.0, "", (), f"cannot start the worker: {exc}")
    if started is not None:
        started(proc)
    lines: list[str] = []
    assert proc.stderr is not None and proc.stdout is not None
    reader = threading.Thread(target=_read_messages, args=(proc.stderr, gpu, on_progress, lines),
                              daemon=True)
    reader.start()
    stdout = proc.stdout.read()
    rc = proc.wait()
    reader.join()
    return WorkerOutcome(gpu, rc, time.perf_counter() - begin, stdout, tuple(lines),
                         _error_line(rc, lines))


def run_workers(command: str, jobs: Sequence[tuple[Gpu, Sequence[str], Mapping[str, str]]], *,
                on_progress: OnProgress | None = None,
                on_done: Callable[[WorkerOutcome], None] | None = None) -> FleetResult:
    """Run every (gpu, argv, env) worker at once; `on_done` as each finishes (one at a time).
    Ctrl-C stops the workers this call started and re-raises."""
    begin = time.perf_counter()
    outcomes: dict[int, WorkerOutcome] = {}
    procs: list[subprocess.Popen[str]] = []
    lock = threading.Lock()
    stopping = False  # set under `lock` on Ctrl-C; a worker started after it is stopped at once

    def started(proc: subprocess.Popen[str]) -> None:
        with lock:
            if not stopping:
                procs.append(proc)
                return
        _stop(proc)

    def one(pos: int, gpu: Gpu, argv: Sequence[str], env: Mapping[str, str]) -> None:
        outcome = run_worker(gpu, argv, env, on_progress=on_progress, started=started)
        with lock:
            outcomes[pos] = outcome
            if on_done is not None:
                on_done(outcome)

    threads = [threading.Thread(target=one, args=(pos, *job), daemon=True)
               for pos, job in enumerate(jobs)]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.2)
    except KeyboardInterrupt:
        with lock:
            stopping = True
            running = list(procs)
        for proc in running:
            _stop(proc)
        raise
    return FleetResult(command, tuple(outcomes[i] for i in range(len(jobs))),
                       time.perf_counter() - begin)


def _stop(proc: subprocess.Popen[str]) -> None:
    """End a worker and reap it: SIGTERM, then SIGKILL if it outlives STOP_WAIT_S."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=STOP_WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
