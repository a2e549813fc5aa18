"""The views of `graphcert env` (machine facts) and `graphcert workloads` (the built-ins). Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text

from graphcert.render.layout import Column, Grid
from graphcert.render.words import Pairs

if TYPE_CHECKING:
    from rich.console import RenderableType

_HEAD = (("driver_version", "driver"), ("cuda_version", "CUDA (driver API)"),
         ("cuda_bindings_version", "cuda-bindings"), ("nvrtc_version", "NVRTC"),
         ("python", "Python"), ("host", "host"), ("cache_dir", "kernel cache"))


def env_view(env: Mapping[str, Any]) -> list[RenderableType]:
    """Versions as key/value lines, then one row per GPU."""
    head = Pairs([(label, str(env[key]) if env.get(key) is not None else
                   "not found" if key == "driver_version" else "-") for key, label in _HEAD],
                 key_style="")
    if env.get("no_driver"):
        return [head, Text(f"GPUs: none here ({env['no_driver']})")]
    columns = [Column(c, key=c == "#", right=c in ("#", "SMs", "memory", "L2"))
               for c in ("#", "name", "uuid", "cc", "SMs", "memory", "SM clock", "mem clock",
                         "L2")]
    gpus = Grid(columns, [
        (str(g["index"]), g["name"], g["uuid"], g["compute_capability"], str(g["sm_count"]),
         f"{g['memory_bytes'] / 2**30:.1f} GiB",
         f"{g['clock_mhz']} MHz" if g["clock_mhz"] else "?",
         f"{g['memory_clock_mhz']} MHz" if g["memory_clock_mhz"] else "?",
         f"{g['l2_bytes'] / 2**20:.0f} MiB") for g in env["gpus"]], title="GPUs")
    return [head, gpus]


def workloads_table(specs: Sequence[Any]) -> Grid:
    """The built-in workloads: name, description, kernel sources (specs with those fields)."""
    columns = (Column("name", key=True), Column("description", wrap=True),
               Column("kernels", wrap=True, sep=", "))
    return Grid(columns, [(Text(spec.name, style="bold"), spec.description,
                           ", ".join(spec.kernel_files)) for spec in specs],
                title="Built-in workloads",
                caption="User workloads: path/file.py:NAME or package.module:NAME "
                        "(see `graphcert workloads --help`)")
