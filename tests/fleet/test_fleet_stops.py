"""`--device all` worker fan-out: a failing display, Ctrl-C, `--` and signals, on the CPU.

The workers are small synthetic Python scripts (`sys.executable -c ...`) standing in for
`python -m graphcert.worker`, speaking its protocol (graphcert.run.worker.serve); the GPUs
are fake `Gpu` values named TEST-GPU.
"""

from __future__ import annotations

import _thread
import itertools
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from graphcert.cert.results.fleet import ProgressEvent, WorkerOutcome
from graphcert.cli import cli
from graphcert.commands._options import DeviceSet
from graphcert.run import fleet, worker
from graphcert.run.worker import CommandJob, job_from_json
from tests.fleet.test_fleet_workers import GPUS, PYTHONPATH, _fake

ENV = {"PATH": "/usr/bin:/bin", "PYTHONPATH": PYTHONPATH}

# Synthetic: the total, then far more stderr than a pipe holds (64 KiB) between 2,000
# progress events, then a result.
CHATTY = ("import sys\n"
          "from graphcert.cert.results.fleet import ProgressEvent\n"
          "from graphcert.run.worker import serve\n"
          "def command(job, events):\n"
          "    events(ProgressEvent('total', 3))\n"
          "    for i in range(4000):\n"
          "        if i % 2:\n"
          "            events(ProgressEvent('advance', 1))\n"
          "        else:\n"
          "            sys.stderr.write(f'synthetic message {i} ' + 'x' * 60 + '\\n')\n"
          "    sys.stderr.write('synthetic last words\\n')\n"
          "    print('{\"synthetic\": true}')\n"
          "    return 0\n"
          "sys.exit(serve(sys.argv[1:], command))\n")

# Synthetic: ignores SIGTERM (so only SIGKILL ends it), says it is ready, then sleeps.
STUBBORN = ("import signal, sys, time\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "from graphcert.cert.results.fleet import ProgressEvent\n"
            "from graphcert.run.worker import serve\n"
            "def command(job, events):\n"
            "    events(ProgressEvent('total', 1))\n"
            "    time.sleep(60)\n"
            "    return 0\n"
            "sys.exit(serve(sys.argv[1:], command))\n")


def _script(monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    monkeypatch.setattr(worker, "worker_command", lambda: [sys.executable, "-c", code])


def test_a_failing_progress_display_does_not_hang_the_worker(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _script(monkeypatch, CHATTY)
    procs: list[subprocess.Popen[str]] = []
    calls: list[str] = []
    got: list[WorkerOutcome] = []

    def broken(gpu: object, event: ProgressEvent) -> None:
        calls.append(event.what)
        raise RuntimeError("synthetic display failure")

    runner = threading.Thread(target=lambda: got.append(fleet.run_worker(
        GPUS[0], CommandJob("verify", {}, 0, progress=True), ENV, on_progress=broken,
        started=procs.append)), daemon=True)
    runner.start()
    try:
        runner.join(30)
        assert not runner.is_alive(), "the worker hung after on_progress raised"
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    outcome = got[0]
    assert outcome.ok and outcome.output_json() == {"synthetic": True}
    assert outcome.messages[-1] == "synthetic last words" and len(outcome.messages) == 2001
    assert calls.count("advance") == 2000  # every progress event still reached the display


def test_ctrl_c_stops_and_reaps_every_worker_even_one_still_starting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fleet, "STOP_WAIT_S", 0.5, raising=False)
    _script(monkeypatch, STUBBORN)
    real_popen = subprocess.Popen
    made: list[subprocess.Popen[str]] = []
    release = threading.Event()
    count, lock = itertools.count(), threading.Lock()

    def popen(argv: list[str], **kw: Any) -> subprocess.Popen[str]:
        with lock:
            late = next(count) == 2
        if late:  # the third worker is still inside Popen when Ctrl-C comes
            release.wait(30)
        proc = real_popen(argv, **kw)
        made.append(proc)
        return proc

    monkeypatch.setattr(worker.subprocess, "Popen", popen)
    ready: list[int] = []

    def on_progress(gpu: object, event: ProgressEvent) -> None:
        ready.append(1)
        if len(ready) == 2:  # both early workers run and ignore SIGTERM: press Ctrl-C
            _thread.interrupt_main()

    jobs = [(g, CommandJob("verify", {}, g.index, progress=True), ENV) for g in GPUS]
    try:
        with pytest.raises(KeyboardInterrupt):
            fleet.run_workers("verify", jobs, on_progress=on_progress)
        early = list(made)
        assert len(early) == 2
        # reaped, not merely signalled: SIGTERM was ignored, so SIGKILL ended them
        assert all(p.returncode == -9 for p in early)
        release.set()
        deadline = time.monotonic() + 15
        while len(made) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        late = made[2]
        late.wait(timeout=15)  # raises if the late worker was left running
        assert late.returncode in (-9, -15)  # SIGTERM may land before it ignores SIGTERM
    finally:
        release.set()
        for proc in made:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_worker_options_stay_apart_from_the_workload_arguments() -> None:
    """The job is typed: the worker's GPU and folder never mix with arguments that look like
    options (`-- --device 7`), and they travel through JSON unchanged."""
    refs = ("examples/step.py", "--device", "7", "--lr", "0.1")
    params = {"workloads": refs, "device": DeviceSet(None, "all"), "out_dir": "certs/gpu1"}
    job = fleet.command_job("verify", params, GPUS[1], several=True, progress=False)
    assert job.device == 1 and job.params == {"workloads": refs, "out_dir": "certs/gpu1"}
    assert job_from_json(json.loads(json.dumps(job.to_json()))) == job


def test_every_worker_killed_is_shown_per_gpu_not_as_bad_input(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # synthetic: every worker dies of SIGKILL
    _fake(monkeypatch, tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    result = CliRunner().invoke(cli, ["verify", "scan", "--device", "0,2", "--out",
                                      str(tmp_path / "certs"), "--json"])
    assert result.exit_code == 137, result.output
    merged = json.loads(result.stdout)
    assert [w["error"] for w in merged["workers"]] == ["the worker was killed by SIGKILL"] * 2
    assert [w["exit_code"] for w in merged["workers"]] == [-9, -9]
