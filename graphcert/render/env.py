"""The views of `graphcert env` (machine facts) and `graphcert workloads` (the built-ins). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from rich.text import Text

from graphcert.jsontypes import Doc, as_docs, as_int, as_str
from graphcert.render.layout import Column, Grid
from graphcert.render.words import Pairs

if TYPE_CHECKING:
    from rich.console import RenderableType

_HEAD = (("driver_version", "driver"), ("cuda_version", "CUDA (driver API)"),
         ("cuda_bindings_version", "cuda-bindings"), ("nvrtc_version", "NVRTC"),
         ("python", "Python"), ("host", "host"), ("cache_dir", "kernel cache"))


def env_view(env: Doc) -> list[RenderableType]:
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
        (str(g["index"]), as_str(g, "name"), as_str(g, "uuid"), as_str(g, "compute_capability"),
         str(g["sm_count"]), f"{as_int(g, 'memory_bytes') / 2**30:.1f} GiB",
         f"{g['clock_mhz']} MHz" if g["clock_mhz"] else "?",
         f"{g['memory_clock_mhz']} MHz" if g["memory_clock_mhz"] else "?",
         f"{as_int(g, 'l2_bytes') / 2**20:.0f} MiB") for g in as_docs(env, "gpus")], title="GPUs")
    return [head, gpus]


class Described(Protocol):
    """What the workloads table shows of a workload spec (graphcert.workloads.registry)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def kernel_files(self) -> Sequence[str]: ...


def workloads_table(specs: Sequence[Described]) -> Grid:
    """The built-in workloads: name, description, kernel sources (specs with those fields)."""
    columns = (Column("name", key=True), Column("description", wrap=True),
               Column("kernels", wrap=True, sep=", "))
    return Grid(columns, [(Text(spec.name, style="bold"), spec.description,
                           ", ".join(spec.kernel_files)) for spec in specs],
                title="Built-in workloads",
                caption="User workloads: path/file.py:NAME or package.module:NAME "
                        "(see `graphcert workloads --help`)")
