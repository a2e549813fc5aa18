"""Options shared by commands that run on a GPU."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click


def _default_device() -> int:
    raw = os.environ.get("GRAPHCERT_DEVICE", "0")
    return int(raw) if raw.isdigit() else 0


def device_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--device", "device", type=click.IntRange(min=0),
                        default=_default_device, show_default="$GRAPHCERT_DEVICE or 0",
                        help="CUDA device index (see `graphcert env`).")(fn)


def json_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print JSON to stdout instead of a table.")(fn)
