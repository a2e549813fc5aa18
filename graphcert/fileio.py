"""Atomic file writes (a file on disk is whole or absent, also when a run is interrupted),
and the one JSON reader every loader uses (one-line errors, bounded depth and integers, no
duplicate keys)."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import signal
import tempfile
import threading
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

from graphcert.errors import InputError, clip_repr

TEMP_SUFFIX = ".tmp"


def is_temp_name(name: str) -> bool:
    """A name graphcert's writes use for temp files (hidden, `.tmp`): every reader skips
    them, so a write killed with SIGKILL leaves nothing a reader sees."""
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's live process (or not a pid we can judge): keep it
    return True


def _remove_leftovers(path: Path) -> None:
    """Delete temp files of earlier writes to `path` whose writer died (e.g. SIGKILL)."""
    prefix = f".{path.name}."
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(TEMP_SUFFIX)):
            continue
        pid_text = name[len(prefix):].split(".", 1)[0]
        if pid_text.isdigit() and not _pid_alive(int(pid_text)):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


class _Terminated(BaseException):
    """SIGTERM arrived during a write: unwind (removing the temp file), then die of it."""


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """While writing, SIGTERM raises so the temp file is removed; the process then ends
    by SIGTERM as it would have. Only the main thread can set handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise _Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, previous)
        os.kill(os.getpid(), signal.SIGTERM)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


def atomic_write_bytes(path: Path | str, data: bytes) -> Path:
    """Write to a temp file beside `path`, fsync it, then rename over `path`.

    The temp name (`.NAME.PID.XXXX.tmp`) is hidden and skipped by every reader; SIGTERM
    during the write removes it, and a later write removes those left by dead writers.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(path)
    with _sigterm_unwinds():
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.",
                                   suffix=TEMP_SUFFIX)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    _fsync_dir(path.parent)
    return path


def atomic_write_text(path: Path | str, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def _fsync_dir(directory: Path) -> None:
    """Make the rename durable where the platform allows (best effort)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def ensure_writable_dir(path: Path | str, what: str = "output directory") -> Path:
    """Create `path` if needed and prove a file can be written there, before any GPU work."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".graphcert-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"{what} {path} is not writable: {exc.strerror or exc}",
                         hint="choose another folder with --out") from exc
    return path


MAX_JSON_DEPTH = 100  # deepest real documents (snapshots with nested child graphs) use ~20


class JSONProblem(ValueError):
    """Why bytes are not acceptable JSON, in a few words; `reason` is a short key."""

    def __init__(self, problem: str, reason: str = "not_json"):
        super().__init__(problem)
        self.problem = problem
        self.reason = reason


_TOO_MANY_DIGITS = re.compile(r"integer string conversion.*?has (\d+) digits")
_BRACKET_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_NOT_BRACKETS = bytes(b for b in range(256) if b not in _BRACKET_STEP)


def _max_depth(raw: bytes) -> int:
    """The deepest bracket nesting of JSON text, counted on the bytes (brackets inside strings
    count too). Checked on the text because walking the parsed value node by node costs more
    than the parse itself."""
    brackets = raw.translate(None, _NOT_BRACKETS)
    return max(accumulate(_BRACKET_STEP[b] for b in brackets), default=0)


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise JSONProblem(f"a number literal is out of range ({text[:30]})", "invalid")
    return value


def _no_constant(text: str) -> Any:
    raise JSONProblem(f"{text} is not JSON (NaN and Infinity are not allowed)", "invalid")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's dict, refusing a key given twice: json keeps the last one silently, so a
    forged `"verdict"` placed before the real one would be read while the signed and
    digested bytes hold both."""
    obj = dict(pairs)
    if len(obj) != len(pairs):  # the cheap test; the key is named only on the error path
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JSONProblem(f"duplicate key {clip_repr(key)} in an object", "invalid")
            seen.add(key)
    return obj


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while parsing: a parse makes no cycles, but the
    (key, value) pairs each object's duplicate check needs would start a collection every
    few hundred objects (measured: a third slower; paused, as fast as before the check)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_json(raw: bytes | str) -> Any:
    """Parse JSON text strictly: UTF-8, no NaN/Infinity, no key twice in one object, no
    integer literal longer than Python reads (4300 digits by default), nesting at most 100
    deep. Raises JSONProblem (one line) for anything else."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise JSONProblem("not JSON (not UTF-8 text)") from None
    if _max_depth(text.encode("utf-8") if isinstance(raw, str) else raw) > MAX_JSON_DEPTH:
        raise JSONProblem(f"nested too deeply (more than {MAX_JSON_DEPTH} levels)", "invalid")
    try:
        with _collector_paused():
            value = json.loads(text, parse_float=_finite_float, parse_constant=_no_constant,
                               object_pairs_hook=_unique_keys)
    except JSONProblem:
        raise
    except json.JSONDecodeError as exc:
        raise JSONProblem(f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
                          ) from None
    except RecursionError:
        raise JSONProblem(f"nested too deeply (more than {MAX_JSON_DEPTH} levels)",
                          "invalid") from None
    except ValueError as exc:  # e.g. a huge float literal, or int conversion limits
        digits = _TOO_MANY_DIGITS.search(str(exc))
        if digits:  # Python's own limit on integer literals (4300 digits by default)
            raise JSONProblem(f"an integer literal has {digits.group(1)} digits (more than "
                              f"Python reads)", "invalid") from None
        raise JSONProblem(f"not JSON ({' '.join(str(exc).split())[:120]})", "invalid") from None
    return value


def read_json(path: Path | str, what: str = "file") -> Any:
    """Read and parse a JSON file; InputError `<what> <path>: <problem>` on any failure.

    The one JSON reader every loader uses (certificates, snapshots, baselines)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{what} {path} cannot be read: {exc.strerror or exc}") from exc
    try:
        return parse_json(raw)
    except JSONProblem as exc:
        raise InputError(f"{what} {path}: {exc.problem}") from None


def check_output_file(path: Path | str, what: str = "output file") -> Path:
    """Prove `path` can be written as a file before any work: not a folder, not under a
    file, its folder writable. InputError (one line, exit 2) otherwise."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{what} {path} is a folder", hint="give a file path")
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if ancestor.exists() and not ancestor.is_dir():
        raise InputError(f"{what} {path} cannot be written: {ancestor} is a file, not a folder",
                         hint="give a path in a folder")
    if path.parent.is_dir() and not os.access(path.parent, os.W_OK):
        raise InputError(f"{what} {path} cannot be written: its folder is not writable")
    return path
