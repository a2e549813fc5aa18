"""watch_torch_compile on the CPU, over a synthetic stand-in for torch (a module named torch
in sys.modules whose CUDAGraph records keep_graph): the class is patched while watching and
restored after, even on error; keep_graph=True reaches __init__; a graph never captured is a
reason. The real torch.compile run is in tests/gpu/test_steps_gpu.py."""

from __future__ import annotations

import types
from typing import Any

import pytest

from graphcert.sources import watch_torch_compile
from graphcert.sources.torch_compile import NEVER_CAPTURED


def _synthetic_torch(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    class CUDAGraph:  # stands in for torch.cuda.graphs.CUDAGraph
        def __init__(self, keep_graph: bool = False) -> None:
            self.keep_graph = keep_graph

        def raw_cuda_graph(self) -> int:
            return 0  # never captured

    CUDAGraph.__module__ = "torch.cuda.graphs"
    torch = types.ModuleType("torch")
    graphs = types.ModuleType("torch.cuda.graphs")
    graphs.CUDAGraph = CUDAGraph  # type: ignore[attr-defined]
    torch.cuda = types.SimpleNamespace(CUDAGraph=CUDAGraph, graphs=graphs)  # type: ignore
    monkeypatch.setitem(__import__("sys").modules, "torch", torch)
    return torch


def test_graphs_are_kept_while_watching_and_the_class_restored(
        monkeypatch: pytest.MonkeyPatch) -> None:
    torch: Any = _synthetic_torch(monkeypatch)
    original = torch.cuda.CUDAGraph
    before = original()
    with watch_torch_compile() as watch:
        assert torch.cuda.CUDAGraph is not original
        assert torch.cuda.graphs.CUDAGraph is torch.cuda.CUDAGraph
        made = [torch.cuda.CUDAGraph(), torch.cuda.graphs.CUDAGraph(keep_graph=False)]
    assert torch.cuda.CUDAGraph is original and torch.cuda.graphs.CUDAGraph is original
    assert before.keep_graph is False
    assert [g.keep_graph for g in made] == [True, True] and watch.graphs == made
    assert isinstance(made[0], original)
    assert watch.snapshots == []
    assert watch.unreadable == [f"torch.compile graph {i}: {NEVER_CAPTURED}" for i in (0, 1)]


def test_the_class_is_restored_when_the_block_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    torch: Any = _synthetic_torch(monkeypatch)
    original = torch.cuda.CUDAGraph
    with pytest.raises(ZeroDivisionError), watch_torch_compile():
        torch.cuda.CUDAGraph()
        1 / 0  # noqa: B018
    assert torch.cuda.CUDAGraph is original and torch.cuda.graphs.CUDAGraph is original
