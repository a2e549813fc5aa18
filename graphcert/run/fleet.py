"""One worker process per GPU: `--device all` and `--device 0,2` on capture, verify and bench.

Each worker is `python -m graphcert.worker` given a `CommandJob` (graphcert.run.worker): the
user's arguments for one GPU, how its certificates are named, whether to send progress. It
is a fresh process (fork + exec, never a fork of a process holding a CUDA context), so GPUs
run in parallel, a crash on one GPU is that worker's failure, and each worker writes its
own certificate. The parent only lists the GPUs (cuInit, no context), starts the workers and
collects their typed replies and events and what they printed.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence

from graphcert.cert.results.fleet import (
    FleetResult,
    Gpu,
    ProgressEvent,
    WorkerError,
    WorkerOutcome,
)
from graphcert.errors import InputError
from graphcert.options import DEVICE_ENV
from graphcert.run.worker import CommandJob, Finished, ParamValue, WorkerProcess

STOP_WAIT_S = 5.0  # after Ctrl-C, how long a worker gets to end on SIGTERM before SIGKILL
OnProgress = Callable[[Gpu, ProgressEvent], None]
Job = tuple[Gpu, CommandJob, Mapping[str, str]]  # a GPU, its job, the worker's environment


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


def command_job(command: str, params: Mapping[str, ParamValue], gpu: Gpu, *,
                several: bool, progress: bool, key_file: str | None = None) -> CommandJob:
    """One GPU's job: the command's parameters as parsed (the job names the GPU, so any
    `device` among them is left out); certificate names with the GPU's short UUID when
    several GPUs run (else as $GRAPHCERT_CERT_NAME says); progress events when the parent
    draws bars; the parent's --signing-key-file, so every worker signs with one key."""
    ours = {k: v for k, v in params.items() if k != "device"}
    return CommandJob(command, ours, gpu.index, uuid_names=True if several else None,
                      progress=progress, key_file=key_file)


def worker_env(base: Mapping[str, str], extra: Mapping[str, str] | None = None
               ) -> dict[str, str]:
    """The worker's environment: `base` (the parent's, as its invocation read it) without
    $GRAPHCERT_DEVICE (the job decides), and `extra` (the terminal's width and colour)."""
    env = {k: v for k, v in base.items() if k != DEVICE_ENV}
    env.update(extra or {})
    return env


def worker_error(done: Finished) -> WorkerError | None:
    """Why the worker failed: the typed error it replied with; else, for one that crashed,
    was killed or failed as a verdict does, how it ended and its last words."""
    if done.exit_code == 0:
        return None
    if done.reply is not None and done.reply.error is not None:
        return done.reply.error
    rc = done.exit_code
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = str(-rc)
        return WorkerError(f"the worker was killed by {name}", None, rc)
    last = next((ln.strip() for ln in reversed(done.messages) if ln.strip()), None)
    return WorkerError(f"exited with code {rc}" + (f": {last}" if last else ""), None, rc)


def run_worker(gpu: Gpu, job: CommandJob, env: Mapping[str, str], *,
               on_progress: OnProgress | None = None,
               started: Callable[[subprocess.Popen[str]], None] | None = None
               ) -> WorkerOutcome:
    """Run one worker to its end; what it printed, its exit code and error."""
    begin = time.perf_counter()

    def on_event(event: ProgressEvent) -> None:
        if on_progress is not None:
            on_progress(gpu, event)

    try:
        worker = WorkerProcess.start(job, env=env, on_event=on_event, started=started)
    except OSError as exc:
        return WorkerOutcome(gpu, 127, 0.0, "", (),
                             WorkerError(f"cannot start the worker: {exc}", None, 127))
    done = worker.wait()
    return WorkerOutcome(gpu, done.exit_code, time.perf_counter() - begin, done.stdout,
                         done.messages, worker_error(done))


def run_workers(command: str, jobs: Sequence[Job], *,
                on_progress: OnProgress | None = None,
                on_done: Callable[[WorkerOutcome], None] | None = None) -> FleetResult:
    """Run every (gpu, job, env) worker at once; `on_done` as each finishes (one at a time).
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

    def one(pos: int, gpu: Gpu, job: CommandJob, env: Mapping[str, str]) -> None:
        outcome = run_worker(gpu, job, env, on_progress=on_progress, started=started)
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
