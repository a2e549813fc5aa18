"""Ctrl-C outside a command's body is one line and exit 130 (see graphcert.__main__).

Imports only os and _signal: `python -m graphcert` and the console script install this
before anything else, so the moments when Python's own handler (a KeyboardInterrupt
traceback) still holds SIGINT stay as few as the interpreter's start-up allows. `signal`
itself would import enum first (about 5 ms, a third of graphcert's start-up before the
handler)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType
    from typing import Any

    Handler = Callable[[int, FrameType | None], object] | int | None

# _signal is signal's C half (signal re-exports its functions); typeshed has no stub for it
_signal: Any = __import__("_signal")

# Whether a command's body runs now: then SIGINT raises KeyboardInterrupt (so the body
# unwinds: temp files removed, workers stopped) instead of leaving at once. A flag the one
# handler reads, not a second handler swapped in: a SIGINT between swapping handlers and
# entering the `try` that catches it would escape as a traceback.
_state = {"body": False}


def interrupted(signum: int, frame: FrameType | None) -> None:
    """SIGINT during start-up, parsing or exit: nothing to clean up, so leave at once; in a
    command's body: KeyboardInterrupt, as Python's own handler raises it."""
    if _state["body"]:
        raise KeyboardInterrupt
    os.write(2, b"graphcert: interrupted\n")
    os._exit(130)


def install() -> None:
    """Take over SIGINT for the whole process (the command-line entry points only)."""
    try:
        _signal.signal(_signal.SIGINT, interrupted)
    except ValueError:  # not the main thread: handlers cannot be set here
        pass


def installed() -> bool:
    """Whether this process is graphcert's command line (its handler holds SIGINT)."""
    return bool(_signal.getsignal(_signal.SIGINT) is interrupted)


def unwind_in_body() -> bool | None:
    """While a command's body runs, Ctrl-C raises KeyboardInterrupt (temp files removed,
    workers stopped, then one line and 130 from the CLI). Returns what `restore` takes;
    changes nothing unless `install` ran (tests and library callers keep their own
    handler)."""
    if not installed():
        return None
    previous = _state["body"]
    _state["body"] = True
    return previous


def restore(previous: bool | None) -> None:
    """Back to leaving at once on SIGINT (None: also when `unwind_in_body` was itself cut
    short by the SIGINT, before it returned)."""
    if installed():
        _state["body"] = bool(previous)


def caused_by_interrupt(exc: BaseException) -> bool:
    """Whether `exc` wraps a KeyboardInterrupt: Python 3.11 turns one raised while a class
    is created (in a descriptor's __set_name__, during an import) into a RuntimeError whose
    cause is the KeyboardInterrupt."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


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
