"""Snapshots of graphs made by PyTorch, CuPy and cuda.core, recorded on a GPU by
tools/record_sources.py (tests/fixtures/sources/README.md says how): loaded (which recomputes
both fingerprints), inventoried and diffed on the CPU, through the API and the CLI."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

import graphcert
from graphcert.cli import cli
from graphcert.model import NodeKind
from graphcert.render.diff import render_diff
from graphcert.render.inventory import render_inventory

SOURCES = Path(__file__).resolve().parents[1] / "fixtures" / "sources"
EXPECTED = {
    "torch-mlp-b8": "torch.cuda.CUDAGraph",
    "torch-mlp-b16": "torch.cuda.CUDAGraph",
    "cupy-axpb": "cupy.cuda.Graph",
    "cuda-core-scale": "cuda.core GraphBuilder",
}


def _path(name: str) -> Path:
    path = SOURCES / f"{name}.snapshot.json"
    if not path.exists():
        pytest.skip("fixtures not yet recorded")
    return path


def _console() -> Console:
    return Console(file=io.StringIO(), width=140, color_system=None, force_terminal=False,
                   record=True)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_loads_with_its_source(name: str) -> None:
    snap = graphcert.load(_path(name))
    assert snap.meta["source"] == EXPECTED[name] and snap.meta["name"] == name
    kernels = [n for n in snap.nodes if n.kind is NodeKind.KERNEL]
    assert kernels and all(k.attrs.get("name") for k in kernels)
    console = _console()
    render_inventory(console, snap)
    text = console.export_text()
    assert "kernel" in text and str(len(snap.nodes)) in text


def test_cuda_core_fixture_is_three_launches_in_a_row() -> None:
    snap = graphcert.load(_path("cuda-core-scale"))
    assert snap.counts() == {"kernel": 3} and len(snap.edges) == 2
    assert [n.attrs["name"] for n in snap.nodes] == ["scale"] * 3


def test_cupy_fixture_is_three_elementwise_kernels() -> None:
    snap = graphcert.load(_path("cupy-axpb"))
    assert snap.counts() == {"kernel": 3} and len(snap.edges) == 2


def test_torch_batches_differ_and_the_diff_names_it() -> None:
    b8, b16 = graphcert.load(_path("torch-mlp-b8")), graphcert.load(_path("torch-mlp-b16"))
    d = graphcert.diff(b8, b16)
    assert not d.identical and not d.shape_equal  # a bucket of its own per batch size
    console = _console()
    render_diff(console, d)
    assert console.export_text().strip()
    assert graphcert.diff(b8, _path("torch-mlp-b8")).identical


def test_cli_inventory_and_diff_on_fixtures() -> None:
    b8, b16 = _path("torch-mlp-b8"), _path("torch-mlp-b16")
    runner = CliRunner()
    result = runner.invoke(cli, ["inventory", str(b8)], env={"COLUMNS": "140"})
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["diff", str(b8), str(b16)], env={"COLUMNS": "140"})
    assert result.exit_code in (0, 1), result.output
    assert result.output.strip()
