"""`--device all` worker fan-out: a failing display, Ctrl-C, `--` and signals, on the CPU.

The workers are small synthetic Python scripts (`sys.executable -c ...`) standing in for
`python -m graphcert ... --device N`; the GPUs are fake `Gpu` values named TEST-GPU.
"""

from __future__ import annotations

import _thread
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from graphcert.cert.results.fleet import WorkerOutcome
from graphcert.cli import cli
from graphcert.run import fleet
from tests.test_fleet_workers import GPUS, _fake

# Synthetic: one progress line, then far more stderr than a pipe holds (64 KiB), then a result.
CHATTY = ("import sys\n"
          "sys.stderr.write('graphcert-progress: total 3\\n')\n"
          "for i in range(4000):\n"
          "    sys.stderr.write('graphcert-progress: advance 1\\n' if i % 2 else\n"
          "                     f'synthetic message {i} ' + 'x' * 60 + '\\n')\n"
          "sys.stderr.write('synthetic last words\\n')\n"
          "print('{\"synthetic\": true}')\n")

# Synthetic: ignores SIGTERM (so only SIGKILL ends it), says it is ready, then sleeps.
STUBBORN = ("import signal, sys, time\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "sys.stderr.write('graphcert-progress: total 1\\n'); sys.stderr.flush()\n"
            "time.sleep(60)\n")


def test_a_failing_progress_display_does_not_hang_the_worker() -> None:
    procs: list[subprocess.Popen[str]] = []
    calls: list[str] = []
    got: list[WorkerOutcome] = []

    def broken(gpu: object, what: str, units: float) -> None:
        calls.append(what)
        raise RuntimeError("synthetic display failure")

    runner = threading.Thread(target=lambda: got.append(fleet.run_worker(
        GPUS[0], [sys.executable, "-c", CHATTY], {"PATH": "/usr/bin:/bin"},
        on_progress=broken, started=procs.append)), daemon=True)
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
    assert calls.count("advance") == 2000  # every progress line still reached the display


def test_ctrl_c_stops_and_reaps_every_worker_even_one_still_starting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fleet, "STOP_WAIT_S", 0.5, raising=False)
    real_popen = subprocess.Popen
    made: list[subprocess.Popen[str]] = []
    release = threading.Event()

    def popen(argv: list[str], **kw: Any) -> subprocess.Popen[str]:
        if "late" in argv:  # still inside Popen when Ctrl-C comes
            release.wait(30)
        proc = real_popen(argv, **kw)
        made.append(proc)
        return proc

    monkeypatch.setattr(fleet.subprocess, "Popen", popen)
    ready: list[int] = []

    def on_progress(gpu: object, what: str, units: float) -> None:
        ready.append(1)
        if len(ready) == 2:  # both early workers run and ignore SIGTERM: press Ctrl-C
            _thread.interrupt_main()

    jobs = [(g, [sys.executable, "-c", STUBBORN, *(["late"] if g.index == 2 else [])],
             {"PATH": "/usr/bin:/bin"}) for g in GPUS]
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


def test_worker_options_go_before_the_workload_arguments() -> None:
    args = ["capture", "examples/step.py", "--device", "all", "--", "--device", "7", "--lr",
            "0.1"]
    argv = fleet.worker_argv(args, GPUS[1], ["--out", "certs/gpu1"])
    assert argv[3:] == ["capture", "examples/step.py", "--out", "certs/gpu1", "--device", "1",
                        "--", "--device", "7", "--lr", "0.1"]


def test_every_worker_killed_is_shown_per_gpu_not_as_bad_input(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _fake(monkeypatch, tmp_path)
    killer = tmp_path / "worker.py"  # synthetic: every worker dies of SIGKILL
    killer.write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    result = CliRunner().invoke(cli, ["verify", "scan", "--device", "0,2", "--out",
                                      str(tmp_path / "certs"), "--json"])
    assert result.exit_code == 137, result.output
    merged = json.loads(result.stdout)
    assert [w["error"] for w in merged["workers"]] == ["the worker was killed by SIGKILL"] * 2
    assert [w["exit_code"] for w in merged["workers"]] == [-9, -9]
