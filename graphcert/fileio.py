"""Atomic file writes (a file on disk is whole or absent, also when a run is interrupted),
and the one JSON reader every loader uses (one-line errors, bounded depth and integers, no
duplicate keys).

A write never replaces a special file: a FIFO or character device the user named
(`-o /dev/stdout`, `--junit /dev/null`) is written through, a symlink to a regular file has
its target replaced (the link stays), and anything else is refused with one line. Input
files are read by graphcert.fileread (bounded: size caps, FIFOs only when named)."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

from graphcert.errors import InputError, clip, clip_repr
from graphcert.fileread import MAX_DOCUMENT_BYTES, is_stream, kind_of, read_bounded, shown
from graphcert.jsontypes import JSONValue

TEMP_SUFFIX = ".tmp"
_TEMP_NAME_BYTES = 200  # of the target's name in a temp name: `.NAME.PID.XXXXXXXX.tmp` fits 255


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


def _temp_stem(path: Path) -> str:
    """`.NAME.` of the temp files of writes to `path`, NAME cut so the temp name fits the
    file system's 255 bytes whenever the target's name does."""
    name = os.fsencode(path.name)[:_TEMP_NAME_BYTES]
    return f".{os.fsdecode(name)}."


def _remove_leftovers(path: Path) -> None:
    """Delete temp files of earlier writes to `path` whose writer died (e.g. SIGKILL)."""
    prefix = _temp_stem(path)
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
    An existing FIFO or character device is written through (no rename), a symlink to a
    regular file has its target replaced; any other special target is an InputError. An
    OSError names `path` (never the temp file).
    """
    path = Path(path)
    target, through = _write_target(path)
    try:
        if through:
            _write_through(target, data)
            return path
        _replace(target, data)
    except OSError as exc:
        if exc.filename is None or Path(exc.filename).parent == target.parent:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise  # a folder that could not be made: the error names it
    return path


def _write_target(path: Path) -> tuple[Path, bool]:
    """Where a write to `path` goes, and whether it is written through instead of renamed."""
    try:
        mode = os.lstat(path).st_mode
    except (OSError, ValueError):
        return path, False  # absent (or unnamable): the write itself says what is wrong
    if stat.S_ISLNK(mode):
        try:
            mode = os.stat(path).st_mode
        except OSError:
            raise InputError(f"{shown(path)} is a symlink to a missing file "
                             f"({shown(os.readlink(path))}); graphcert does not write "
                             f"through a broken link",
                             hint="remove the link, or create its target first") from None
        if stat.S_ISREG(mode):  # replace the target atomically; the link stays a link
            return Path(os.path.realpath(path)), False
    if stat.S_ISREG(mode):
        return path, False
    if is_stream(mode):
        return path, True
    raise InputError(f"{shown(path)} is {kind_of(mode)}, which graphcert never replaces",
                     hint="give a file path")


def _write_through(path: Path, data: bytes) -> None:
    """Write into a FIFO or device the user named, as a shell redirection does (opening a
    FIFO waits for its reader)."""
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _replace(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(path)
    with _sigterm_unwinds():
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{_temp_stem(path)}{os.getpid()}.",
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
# JSON admits a lone UTF-16 surrogate's escape; Python makes it a str no UTF-8 output can
# encode (every view, diff and report would fail writing it)
_SURROGATE_ESCAPE, _SURROGATE = re.compile(r"\\u[dD][89a-fA-F]"), re.compile("[\ud800-\udfff]")
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


def parse_json(raw: bytes | str) -> JSONValue:
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
            value: JSONValue = json.loads(text, parse_float=_finite_float,
                                          parse_constant=_no_constant,
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
    if _SURROGATE_ESCAPE.search(text):  # rare: only then is the parsed value walked
        _refuse_lone_surrogates(value)
    return value


def _refuse_lone_surrogates(value: Any) -> None:
    """JSONProblem naming (escaped) a string or key with a lone surrogate (a pair is one
    character): refused here, every reader agrees and no view meets what it cannot print."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (dict, list)):
            stack.extend([*item.keys(), *item.values()] if isinstance(item, dict) else item)
        elif isinstance(item, str) and _SURROGATE.search(item):
            raise JSONProblem(f"a string holds an escaped lone surrogate, which is not "
                              f"Unicode text: {clip(ascii(item), 60)}", "invalid")


def read_json(path: Path | str, what: str = "file", *, named: bool = True) -> JSONValue:
    """Read and parse a JSON file; InputError `<what> <path>: <problem>` on any failure. The
    one JSON reader every loader uses (certificates, snapshots, baselines); `named` False for
    a file found in a folder (then a FIFO or device is refused, not read)."""
    raw = read_bounded(path, MAX_DOCUMENT_BYTES, streams=named)
    try:
        return parse_json(raw)
    except JSONProblem as exc:
        raise InputError(f"{what} {shown(path)}: {exc.problem}") from None


def check_output_file(path: Path | str, what: str = "output file") -> Path:
    """Prove `path` can be written as a file before any work: named, not a folder or other
    special file (a FIFO or character device is fine: it is written through), not under a
    file, its folder (or the nearest one that exists) writable. InputError (one line,
    exit 2) otherwise."""
    if not os.fspath(path):
        raise InputError(f"{what} is an empty path", hint="give a file path")
    path = Path(path)
    folder = path.parent
    try:
        mode: int | None = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
        if os.path.islink(path):
            raise InputError(f"{what} {shown(path)} is a symlink to a missing file",
                             hint="remove the link, or create its target first") from None
    except NotADirectoryError:
        mode = None  # a file where a folder should be: found below
    except (OSError, ValueError) as exc:
        raise InputError(f"{what} {shown(path)} cannot be written: "
                         f"{getattr(exc, 'strerror', None) or exc}") from None
    if mode is not None:
        if stat.S_ISDIR(mode):
            raise InputError(f"{what} {shown(path)} is a folder", hint="give a file path")
        if is_stream(mode):
            return path
        if not stat.S_ISREG(mode):
            raise InputError(f"{what} {shown(path)} is {kind_of(mode)}, which graphcert never "
                             f"replaces", hint="give a file path")
        folder = Path(os.path.realpath(path)).parent
    ancestor = folder
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if os.path.exists(ancestor) and not os.path.isdir(ancestor):  # `a/b` where `a` is a file
        raise InputError(f"{what} {shown(path)} cannot be written: {shown(ancestor)} is a "
                         f"file, not a folder", hint="give a path in a folder")
    if not os.access(ancestor, os.W_OK):
        where = "its folder" if ancestor == folder else f"the folder {shown(ancestor)}"
        raise InputError(f"{what} {shown(path)} cannot be written: {where} is not writable")
    return path


def missing_folder(path: Path | str) -> Path | None:
    """The outermost folder a write to `path` would create, or None when its folder exists."""
    folder = Path(path).parent
    if os.path.isdir(folder):
        return None
    while not os.path.isdir(folder.parent) and folder.parent != folder:
        folder = folder.parent
    return folder


def write_output(path: Path | str, text: str, what: str = "output file") -> Path | None:
    """Write a user's output file (checked first with check_output_file): atomically, or
    through a FIFO or device. Returns the folder it had to create (the caller says so), or
    None; any OSError is an InputError naming the file."""
    created = missing_folder(path)
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise InputError(f"{what} {shown(exc.filename or path)} cannot be written: "
                         f"{exc.strerror or exc}") from None
    return created
