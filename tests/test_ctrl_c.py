"""Issue 28 item 11: Ctrl-C at any moment after Python's own start-up (importing click and
the command, parsing, the command's body) is one line and exit 130, never a traceback.

Before Python runs graphcert's first line (interpreter and site start-up, ~15 ms) Python
handles SIGINT itself: the delays start after that."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _python_start_up_s() -> float:
    """How long this machine takes to start Python and import graphcert (the worst of 3)."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import graphcert"], env=ENV, check=True)
        times.append(time.perf_counter() - start)
    return max(times)


def test_ctrl_c_at_any_moment_is_one_line_and_130(tmp_path: Path) -> None:
    fifo = tmp_path / "c.json"
    os.mkfifo(fifo)  # `show` waits on it (no writer ever comes): the run never ends by itself
    first = 2 * _python_start_up_s()
    outcomes = []
    for delay in [first + 0.008 * k for k in range(12)] + [first + 0.3]:
        proc = subprocess.Popen([sys.executable, "-m", "graphcert", "show", str(fifo)],
                                cwd=tmp_path, env=ENV, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        outcomes.append((round(delay, 3), proc.returncode, err))
    bad = [o for o in outcomes if o[1:] != (130, "graphcert: interrupted\n")]
    assert not bad, bad
