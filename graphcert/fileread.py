"""The one bounded reader of input files: certificates, snapshots, baselines, policies, key
files, workload sources.

A regular file is read up to a size cap (checked on its size before reading). A FIFO or a
character device (`<(cmd)`, /dev/stdin) is read only when the user named it, never when it
was found by walking a folder, and then up to a smaller cap and within a time limit: so
/dev/zero, a FIFO whose writer writes forever or never, or a symlink to either, is one line
(exit 2), never a hang or an unbounded allocation. Anything else (a folder, a socket, a
block device) is refused. Pure: the standard library only.
"""

from __future__ import annotations

import os
import select
import stat
import time
from pathlib import Path

from graphcert.errors import InputError

MiB = 1 << 20
# Largest real files: certificates ~50 KB, snapshots ~550 bytes a node (a 100,000-node graph
# ~55 MB). The caps are far above those and far below what exhausts a CI machine.
MAX_DOCUMENT_BYTES = 512 * MiB  # a certificate, snapshot or baseline certificate (JSON)
MAX_POLICY_BYTES = 16 * MiB  # a TOML policy or pyproject.toml
MAX_KEY_BYTES = 64 * 1024  # a signing key file (a real key is 16 to a few hundred bytes)
MAX_SOURCE_BYTES = 64 * MiB  # one workload source file hashed for staleness
STREAM_MAX_BYTES = 64 * MiB  # at most this from a FIFO or device, whatever the kind's cap
STREAM_TIMEOUT_S = 60.0  # a FIFO or device must deliver everything within this
_CHUNK = MiB
_SHOWN_PATH = 200  # characters of a path a message shows


def shown(path: Path | str) -> str:
    """`path` for a message: a very long one is cut in the middle (one readable line)."""
    text = os.fspath(path)
    if len(text) <= _SHOWN_PATH:
        return text
    return f"{text[:120]}...{text[-60:]} ({len(text)} characters)"


def size_text(n: int) -> str:
    """A byte count as a reader says it: 64 KiB, 512 MiB."""
    return f"{n // MiB} MiB" if n >= MiB else f"{n // 1024} KiB"


def kind_of(mode: int) -> str:
    """What a stat mode is, as a message says it ('a regular file', 'a FIFO', ...)."""
    kinds = ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"),
             (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISLNK, "a symlink"))
    return next((name for test, name in kinds if test(mode)), "a special file")


def is_stream(mode: int) -> bool:
    """A FIFO or a character device: read (or written) through, never renamed over."""
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


class FileProblem(InputError):
    """An input file that cannot be read: `problem` in a few words (no path), `reason` a
    short key: missing, unreadable, not_a_file, too_large, timeout."""

    def __init__(self, path: Path | str, problem: str, reason: str, *,
                 hint: str | None = None):
        super().__init__(f"{shown(path)}: {problem}", hint=hint)
        self.path = os.fspath(path)
        self.problem = problem
        self.reason = reason


def _stat_kind(path: Path | str) -> str | None:
    try:
        return kind_of(os.stat(path).st_mode)
    except (OSError, ValueError):
        return None


def _open(path: Path | str) -> int:
    """Open for reading without blocking: a FIFO with no writer opens at once (and its kind
    is then known from fstat), so nothing waits before the checks."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags)
    except FileNotFoundError:
        if os.path.islink(path):
            raise FileProblem(path, "a broken symlink (its target does not exist)",
                              "missing") from None
        raise FileProblem(path, "no such file", "missing") from None
    except OSError as exc:
        kind = _stat_kind(path)
        if kind is not None and kind != "a regular file":  # a socket gives ENXIO
            raise FileProblem(path, f"is {kind}, not a file", "not_a_file") from None
        raise FileProblem(path, f"cannot be read: {exc.strerror or exc}", "unreadable") from None


def read_bounded(path: Path | str, limit: int, *, streams: bool = True) -> bytes:
    """The bytes of `path`, at most `limit`; FileProblem (one line naming the file) otherwise.

    `streams`: the user named this path (a command-line argument, an option, an environment
    variable), so a FIFO or character device is read too, up to STREAM_MAX_BYTES and within
    STREAM_TIMEOUT_S. Pass False for a file found by walking a folder."""
    fd = _open(path)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode):
            return _read_regular(fd, path, limit)
        kind = kind_of(mode)
        if streams and is_stream(mode):
            return _read_stream(fd, path, min(limit, STREAM_MAX_BYTES), kind)
        if is_stream(mode):
            raise FileProblem(path, f"is {kind}, not a regular file", "not_a_file",
                              hint="graphcert reads a FIFO or device only when it is named "
                                   "on the command line, never one found in a folder")
        raise FileProblem(path, f"is {kind}, not a file", "not_a_file")
    except OSError as exc:
        raise FileProblem(path, f"cannot be read: {exc.strerror or exc}", "unreadable") from None
    finally:
        os.close(fd)


def _too_large(path: Path | str, what: str, limit: int) -> FileProblem:
    return FileProblem(path, f"{what}; graphcert reads at most {size_text(limit)} here",
                       "too_large")


def _read_regular(fd: int, path: Path | str, limit: int) -> bytes:
    size = os.fstat(fd).st_size
    if size > limit:
        raise _too_large(path, f"is {size:,} bytes", limit)
    parts: list[bytes] = []
    total = 0
    while True:  # the size is a hint only: the file may grow, or be a /proc file of size 0
        chunk = os.read(fd, min(limit + 1 - total, max(size + 1 - total, 1 << 16)))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        total += len(chunk)
        if total > limit:
            raise _too_large(path, f"grew past {size_text(limit)} while being read", limit)


def _read_stream(fd: int, path: Path | str, limit: int, kind: str) -> bytes:
    """Read a FIFO or device until its writer closes it, waiting at most STREAM_TIMEOUT_S in
    all (poll: a FIFO without a writer reports nothing until one comes and goes)."""
    deadline = time.monotonic() + STREAM_TIMEOUT_S
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    parts: list[bytes] = []
    total = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(max(1, int(left * 1000))):
            raise FileProblem(path, f"is {kind} that did not finish sending within "
                                    f"{STREAM_TIMEOUT_S:g} s", "timeout",
                              hint="give a regular file, or make sure its writer finishes")
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            continue
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        total += len(chunk)
        if total > limit:
            raise FileProblem(path, f"is {kind} that sent more than {size_text(limit)}; "
                                    f"graphcert reads at most {size_text(limit)} from a "
                                    f"FIFO or device", "too_large",
                              hint="save it to a regular file first")
