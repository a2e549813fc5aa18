"""Ctrl-C outside a command's body is one line and exit 130 (see graphcert.__main__).

Imports only os and signal: `python -m graphcert` installs this before anything else."""

from __future__ import annotations

import os
import signal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from signal import Handlers
    from types import FrameType

    Handler = Callable[[int, FrameType | None], object] | int | Handlers | None


def interrupted(signum: int, frame: FrameType | None) -> None:
    """SIGINT during start-up, parsing or exit: nothing to clean up, so leave at once."""
    os.write(2, b"graphcert: interrupted\n")
    os._exit(130)


def install() -> None:
    """Take over SIGINT for the whole process (the command-line entry points only)."""
    try:
        signal.signal(signal.SIGINT, interrupted)
    except ValueError:  # not the main thread: handlers cannot be set here
        pass


def unwind_in_body() -> Handler:
    """While a command's body runs, Ctrl-C raises KeyboardInterrupt (temp files removed,
    workers stopped, then one line and 130 from the CLI). Returns what to restore; changes
    nothing unless `install` ran (tests and library callers keep their own handler)."""
    if signal.getsignal(signal.SIGINT) is not interrupted:
        return None
    try:
        return signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:
        return None


def restore(previous: Handler) -> None:
    if previous is not None:
        signal.signal(signal.SIGINT, previous)


def leave() -> None:
    """Exit 130 now, after a command's body unwound from Ctrl-C and the line was printed.
    Not sys.exit: Python 3.11 at times still ends such a process by SIGINT at exit, though
    the KeyboardInterrupt was caught (about 1 run in 15 here, Ctrl-C during an import)."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(130)
