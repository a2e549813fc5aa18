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

import pytest

ROOT = Path(__file__).resolve().parents[2]
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


# SIGINT at fixed points, sent by the process to itself (deterministic, untimed) ----------

_FAKE_COMMAND = """
import importlib.machinery, os, signal, sys, types
import click
from graphcert import cli

def interrupt_here():
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(10**6):  # the Python-level handler runs at the next loop check
        pass

@click.command()
def command():
    {body}

module = types.ModuleType("fake_command")
module.__spec__ = importlib.machinery.ModuleSpec("fake_command", None)
module.command = command
sys.modules["fake_command"] = module
cli.COMMANDS["boom"] = ("fake_command", "interrupted at a fixed point")
sys.argv = ["graphcert", "boom"]
from graphcert.__main__ import main
main()
"""
_AT = {
    # Python 3.11 wraps a KeyboardInterrupt raised in __set_name__ (class creation, as in
    # an import) in a RuntimeError
    "class creation": "class D:\n        def __set_name__(self, owner, name):\n"
                      "            interrupt_here()\n    class Owner:\n        d = D()",
    "body": "interrupt_here()",
    "writing the output": "click.echo('x'); interrupt_here(); click.echo('y')",
}


@pytest.mark.parametrize("where", sorted(_AT))
def test_sigint_at_a_fixed_point_of_a_body_is_one_line_and_130(where: str) -> None:
    script = _FAKE_COMMAND.replace("{body}", _AT[where])
    done = subprocess.run([sys.executable, "-c", script], env=ENV, capture_output=True,
                          text=True, timeout=60, check=False)
    assert (done.returncode, done.stderr) == (130, "graphcert: interrupted\n"), done.stderr


@pytest.mark.parametrize("stage", ["after install", "after the click import"])
def test_sigint_at_a_fixed_point_of_start_up_is_one_line_and_130(stage: str) -> None:
    later = "import click\n" if stage == "after the click import" else ""
    script = ("from graphcert import _interrupt\n_interrupt.install()\n" + later +
              "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n"
              "for _ in range(10**6):\n    pass\n")
    done = subprocess.run([sys.executable, "-c", script], env=ENV, capture_output=True,
                          text=True, timeout=60, check=False)
    assert (done.returncode, done.stderr) == (130, "graphcert: interrupted\n"), done.stderr


def test_an_interrupt_wrapped_by_class_creation_is_recognised() -> None:
    from graphcert import _interrupt

    class Stop:
        def __set_name__(self, owner: type, name: str) -> None:
            raise KeyboardInterrupt

    with pytest.raises(RuntimeError) as caught:
        type("Owner", (), {"stop": Stop()})
    assert _interrupt.caused_by_interrupt(caught.value)
    assert not _interrupt.caused_by_interrupt(RuntimeError("not Ctrl-C"))
