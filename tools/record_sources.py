"""Record one snapshot per graph source on a GPU machine, for the CPU tier's fixtures.

    PYTHONPATH=. python3 tools/record_sources.py [OUTDIR]     (default tests/fixtures/sources)

Captures the examples in examples/sources/ (a PyTorch MLP block at batch 8 and 16, a CuPy
stream capture, a cuda.core GraphBuilder), reads each through graphcert.snapshot, saves it
as NAME.snapshot.json and writes README.md saying how, where and when. A source whose
framework is missing or fails is reported and left out; the exit status is 1 then.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib.util
import os
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import graphcert  # noqa: E402
import graphcert.errors  # noqa: E402


def _example(name: str) -> ModuleType:
    path = ROOT / "examples" / "sources" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"graphcert_example_{name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sources() -> list[tuple[str, str, Callable[[], tuple[Any, list[Any]]]]]:
    """(fixture name, how it was made, capture function)."""
    return [
        ("torch-mlp-b8", "examples/sources/torch_mlp.py capture(8): fp16 LayerNorm, Linear "
         "256->1024, GELU, Linear 1024->256 under torch.cuda.graph, CUDAGraph(keep_graph=True)",
         lambda: _example("torch_mlp").capture(8)),
        ("torch-mlp-b16", "the same block at batch 16",
         lambda: _example("torch_mlp").capture(16)),
        ("cupy-axpb", "examples/sources/cupy_graph.py capture(): multiply, add, clip on a "
         "CuPy stream capture (Stream.begin_capture/end_capture), 65536 float32",
         lambda: _example("cupy_graph").capture()),
        ("cuda-core-scale", "examples/sources/cuda_core_graph.py capture(): three launches of "
         "an NVRTC-compiled kernel on a cuda.core GraphBuilder (after end_building())",
         lambda: _example("cuda_core_graph").capture()),
    ]


def _machine() -> dict[str, str]:
    from cuda.bindings import driver

    from graphcert.cuda.device import device_info

    facts = {"gpu": device_info(0).name}
    err, version = driver.cuDriverGetVersion()
    if int(err) == 0:
        facts["cuda_driver_api"] = f"{version // 1000}.{version % 1000 // 10}"
    try:
        facts["driver"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
            capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    try:  # a device machine's copy of the tree may carry a stale .git: the variable wins
        facts["commit"] = os.environ.get("GRAPHCERT_GIT_COMMIT", "")[:7] or subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                         capture_output=True, text=True,
                                         check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        facts["commit"] = "unknown"
    return facts


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "tests" / "fixtures" / "sources"
    out.mkdir(parents=True, exist_ok=True)
    try:
        machine = _machine()
    except graphcert.errors.GraphcertError as exc:
        print(f"record_sources: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    recorded: list[tuple[str, str, Any]] = []
    failed = 0
    keep: list[Any] = []  # graphs and their buffers stay alive until everything is read
    for name, how, capture in _sources():
        try:
            graph, owned = capture()
            keep.append((graph, owned))
            snap = graphcert.snapshot(graph, name=name)
        except Exception as exc:  # a missing framework or a failed capture: report, go on
            failed += 1
            print(f"{name}: NOT recorded: {type(exc).__name__}: {exc}", file=sys.stderr)
            traceback.print_exc(limit=3)
            continue
        snap = dataclasses.replace(snap, meta={**snap.meta, "gpu": machine["gpu"]})
        path = graphcert.save(snap, out / f"{name}.snapshot.json")
        recorded.append((name, how, snap))
        print(f"{name}: {snap.counts()} topology {snap.topology_hash[:12]} -> {path}")
    if recorded:
        _readme(out, machine, recorded)
    return 1 if failed else 0


def _readme(out: Path, machine: dict[str, str], recorded: list[tuple[str, str, Any]]) -> None:
    today = datetime.date.today().isoformat()
    lines = [
        "# Snapshots of graphs made by other libraries",
        "",
        "Recorded on a real GPU by `tools/record_sources.py` (nothing here is hand-written):",
        f"{machine['gpu']}, driver {machine.get('driver', '?')} (CUDA driver API "
        f"{machine.get('cuda_driver_api', '?')}), on {today}, at commit {machine['commit']}.",
        "Each graph was made by its library's own capture and read through",
        "`graphcert.snapshot(obj)`; the library versions are in each file's `meta.framework`.",
        "Re-record with `PYTHONPATH=. python3 tools/record_sources.py` on a GPU machine.",
        "",
    ]
    for name, how, snap in recorded:
        lines.append(f"- `{name}.snapshot.json` ({snap.meta.get('framework') or 'driver API'}):"
                     f" {how}. Nodes: {snap.counts()}.")
    (out / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
