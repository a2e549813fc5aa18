"""Errors every layer raises. Pure: no CUDA import, so the CLI can catch them anywhere."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    """What a graphcert command's exit code means; every command exits with one of these."""

    OK = 0  # done; for verify, bench and gate also: the verdict passed
    FAILED = 1  # the verdict or the gate failed (CI reads this as a failed check)
    UNUSABLE = 2  # bad input or unusable certificates: one line says what and how to fix it
    NO_GPU = 3  # no CUDA driver or device where one is needed
    # `graphcert record -- COMMAND` only: the command cannot run, as a shell says it (so a
    # CI script that puts `graphcert record --` in front of a command reads the same codes)
    COMMAND_NOT_EXECUTABLE = 126
    COMMAND_NOT_FOUND = 127
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT); graphcert._interrupt writes it as a literal
    # stdout's reader closed the pipe (`| head`): quiet, 128 + SIGPIPE as a shell reports a
    # tool SIGPIPE ended; never 0, so a failing gate piped to head cannot read as a pass
    PIPE_CLOSED = 141


def first_line(exc: BaseException, *, typed: bool = False) -> str:
    """The first non-blank line of an exception's text, stripped (a framework's error can be
    a page long), after `TypeName: ` with `typed`; the type's name alone when it says nothing."""
    line = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), None)
    if line is None:
        return type(exc).__name__
    return f"{type(exc).__name__}: {line}" if typed else line


class GraphcertError(Exception):
    """An error the user can act on: one line of message, an optional fix, an exit code."""

    exit_code: int = ExitStatus.UNUSABLE

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def one_line(self) -> str:
        """The message and the fix on one line, as the CLI prints it."""
        text = single_line(self.message)
        if self.hint:
            text += f" ({single_line(self.hint)})"
        return text

    def __str__(self) -> str:
        return self.one_line()


# What needs a GPU and what does not, in the words a user without one reads: the no-driver
# error and the top-level help say it from here (a test holds them to cli.COMMANDS).
GPU_COMMANDS = ("capture", "verify", "bench", "profile", "record", "plan")
GPU_FREE_COMMANDS = ("gate", "show", "diff", "report", "env", "workloads")
WHAT_NEEDS_A_GPU = (f"{', '.join(GPU_COMMANDS[:-1])} and {GPU_COMMANDS[-1]} need a GPU, as does "
                    f"inventory of a workload; {', '.join(GPU_FREE_COMMANDS)} and inventory of a "
                    f"saved snapshot do not")


class NoDriverError(GraphcertError):
    """No NVIDIA driver or no CUDA device: the only condition under which GPU tests skip."""

    exit_code = ExitStatus.NO_GPU


class CudaError(GraphcertError):
    """A CUDA driver or NVRTC call failed; names the call, the CUDA error name and text."""

    def __init__(self, call: str, code: int, name: str, text: str, hint: str | None = None):
        super().__init__(f"{call} failed: {name} ({code}): {text}", hint=hint)
        self.call = call
        self.code = code
        self.name = name
        self.text = text


class CompileError(GraphcertError):
    """NVRTC rejected a kernel source; the message carries the compiler log."""

    def __init__(self, source_name: str, log: str):
        first = next((ln for ln in log.splitlines() if "error" in ln), log.strip()[:200])
        super().__init__(
            f"NVRTC could not compile {source_name}: {first.strip()}",
            hint="fix the kernel source; the full log follows",
        )
        self.source_name = source_name
        self.log = log


class CaptureError(GraphcertError):
    """Stream capture was broken by a call inside the recording."""

    def __init__(self, message: str, *, broken_by: str | None = None, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.broken_by = broken_by


class InputError(GraphcertError):
    """Bad user input: a size, a path, a file, a workload name."""


class FrameworkMissing(InputError):
    """A framework step's framework (PyTorch, CuPy, cuda.core) cannot run here, for one of two
    reasons its message names: it is not installed ("cuda.core is not installed (...)"), or
    it is installed and has no CUDA device to use ("cuda.core has no CUDA device to use: no
    NVIDIA driver found ..."). A value with its reason for tests to skip on; one line and
    exit 2 for the CLI."""


ECHO_LIMIT = 80  # characters of a file's own text (a key, a reference) a message repeats


def single_line(text: str) -> str:
    """`text` as one terminal-safe line: runs of whitespace become one space, and characters
    that are not printable (escape sequences' ESC, BEL, carriage returns, bidi overrides)
    are dropped, so a certificate's own text cannot move the cursor or recolour a CI log."""
    text = " ".join(text.split())
    return text if text.isprintable() else "".join(ch for ch in text if ch.isprintable())


def clip(text: str, limit: int = ECHO_LIMIT) -> str:
    """`text` (from a file or an argument) as a message may repeat it: a longer one is cut
    after `limit` characters with an ellipsis and its length, so a 100 KB workload
    reference or key makes a short line, not a 100 KB one."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def clip_repr(value: object, limit: int = ECHO_LIMIT) -> str:
    """repr(value) for a message, cut as `clip` cuts (a string's first `limit` characters
    quoted, then the ellipsis and its length)."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    return clip(repr(value), limit)
