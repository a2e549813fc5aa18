"""The views of `graphcert env` (machine facts) and `graphcert workloads` (the built-ins). Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import RenderableType

_HEAD = (("driver_version", "driver"), ("cuda_version", "CUDA (driver API)"),
         ("cuda_bindings_version", "cuda-bindings"), ("nvrtc_version", "NVRTC"),
         ("python", "Python"), ("host", "host"), ("cache_dir", "kernel cache"))


def env_view(env: Mapping[str, Any]) -> list[RenderableType]:
    """Versions as key/value lines, then one row per GPU."""
    head = Table.grid(padding=(0, 2))
    for key, label in _HEAD:
        value = env.get(key)
        head.add_row(label, str(value) if value is not None else
                     "not found" if key == "driver_version" else "-")
    if env.get("no_driver"):
        return [head, Text(f"GPUs: none here ({env['no_driver']})")]
    gpus = Table(title="GPUs")
    for col in ("#", "name", "uuid", "cc", "SMs", "memory", "SM clock", "mem clock", "L2"):
        gpus.add_column(col)
    for g in env["gpus"]:
        gpus.add_row(str(g["index"]), g["name"], g["uuid"], g["compute_capability"],
                     str(g["sm_count"]), f"{g['memory_bytes'] / 2**30:.1f} GiB",
                     f"{g['clock_mhz']} MHz" if g["clock_mhz"] else "?",
                     f"{g['memory_clock_mhz']} MHz" if g["memory_clock_mhz"] else "?",
                     f"{g['l2_bytes'] / 2**20:.0f} MiB")
    return [head, gpus]


def workloads_table(specs: Sequence[Any]) -> Table:
    """The built-in workloads: name, description, kernel sources (specs with those fields)."""
    table = Table(title="Built-in workloads", title_justify="left",
                  caption="User workloads: path/file.py:NAME or package.module:NAME "
                          "(see `graphcert workloads --help`)", caption_justify="left")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("description")
    table.add_column("kernels", no_wrap=True)
    for spec in specs:
        table.add_row(spec.name, spec.description, ", ".join(spec.kernel_files))
    return table
