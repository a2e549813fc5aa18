"""Consoles: data to stdout, messages to stderr; colour and progress follow the environment."""

from __future__ import annotations

import os
import sys
from functools import cache

from rich.console import Console


@cache
def stdout_console() -> Console:
    """The console for data. rich itself honours NO_COLOR, FORCE_COLOR and COLUMNS."""
    return Console(soft_wrap=False, highlight=False)


@cache
def stderr_console() -> Console:
    """The console for messages and progress."""
    return Console(stderr=True, highlight=False)


def progress_allowed() -> bool:
    """Progress bars only on an interactive terminal and never under CI."""
    return sys.stderr.isatty() and not os.environ.get("CI")


def print_json(text: str) -> None:
    """Write JSON to stdout unchanged (no rich markup, no wrapping)."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
