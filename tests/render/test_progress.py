"""Progress bars: drawn on a terminal, never under CI or when output is not a terminal.

No GPU: the helper is driven as verify drives it (classes x samples units)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from graphcert.options import Options
from graphcert.render import progress as progress_mod
from graphcert.render.progress import bars_allowed, progress

ROOT = Path(__file__).resolve().parents[2]


def _as_terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """Pretend both streams are terminals; the bar goes to a forced-terminal console."""
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    buffer = io.StringIO()
    fake = Console(file=buffer, force_terminal=True, width=100, color_system=None)
    monkeypatch.setattr(progress_mod, "Console", lambda **kwargs: fake)
    return buffer


def _options() -> Options:
    """What the command line reads from the (patched) environment."""
    return Options.from_environ(os.environ, signing=False)


def _drive(advance: progress_mod.Advance) -> None:
    for capacity in (256, 512, 1024):
        for _ in range(4):
            advance(1, f"verify scan class {capacity:,}")


def test_bar_drawn_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = _as_terminal(monkeypatch)
    assert bars_allowed(_options())
    with progress(12, "verify", _options()) as advance:
        _drive(advance)
    text = buffer.getvalue()
    assert "verify scan class" in text and "12/12" in text and "left" in text


@pytest.mark.parametrize("env", [{"CI": "true"}, {"TERM": "dumb"}])
def test_no_bar_under_ci_or_dumb_terminal(monkeypatch: pytest.MonkeyPatch,
                                          env: dict[str, str]) -> None:
    buffer = _as_terminal(monkeypatch)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert not bars_allowed(_options())
    with progress(12, "verify", _options()) as advance:
        _drive(advance)
    assert buffer.getvalue() == ""


def test_no_bar_when_piped() -> None:
    """A real process, both streams pipes, CI=true as CI runs it: nothing but the data."""
    code = ("import os\n"
            "from graphcert.options import Options\n"
            "from graphcert.render.progress import progress\n"
            "with progress(12, 'verify', Options.from_environ(os.environ)) as advance:\n"
            "    [advance(1, 'verify scan') for _ in range(12)]\n"
            "print('done')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, env={"CI": "true", "PYTHONPATH": str(ROOT)}, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "done\n" and proc.stderr == ""


def test_a_worker_sends_typed_events_and_draws_no_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """Given where a worker's events go (its parent draws the bar), progress sends the total
    and each advance there as typed events, even on a terminal, and draws nothing itself."""
    from graphcert.cert.results.fleet import ProgressEvent

    buffer = _as_terminal(monkeypatch)
    sent: list[ProgressEvent] = []
    with progress(12, "verify", Options(), sent.append) as advance:
        _drive(advance)
    assert sent == [ProgressEvent("total", 12.0)] + [ProgressEvent("advance", 1.0)] * 12
    assert buffer.getvalue() == ""
    with progress(0, "verify", Options(), sent.append) as advance:  # nothing to count: no events
        advance(1)
    assert len(sent) == 13
