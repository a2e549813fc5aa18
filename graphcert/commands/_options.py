"""Options shared by commands that run on a GPU."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


def device_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--device N, or $GRAPHCERT_DEVICE, or 0: the one place that variable is read (click
    rejects a value that is not a device index in one line, exit 2)."""
    return click.option("--device", "device", type=click.IntRange(min=0), default=0,
                        show_default=True, envvar="GRAPHCERT_DEVICE", show_envvar=True,
                        help="CUDA device index (see `graphcert env`).")(fn)


def json_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print JSON to stdout instead of a table.")(fn)
