"""Graph sources on the CPU: which objects are recognised, the CUgraph address found in each,
and the one-line errors. Every framework object here is a SYNTHETIC stand-in: a class given
the module and name of the real one, with only the attribute graphcert reads."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import graphcert
from graphcert.errors import GraphcertError, InputError
from graphcert.model import NodeKind, RawGraph, RawNode, snapshot_from_raw
from graphcert.sources import graph_ref, snapshot_of


def synthetic_class(module: str, name: str, **members: Any) -> type:
    """A synthetic class that claims to live in `module` (as the real framework type does)."""
    return type(name, (), {"__module__": module, "__doc__": "synthetic stand-in", **members})


def fake_torch_graph(handle: Any = 0x7F00_0000_1000, error: str | None = None) -> Any:
    def raw_cuda_graph(self: Any) -> Any:
        if error is not None:
            raise RuntimeError(error)
        return handle

    return synthetic_class("torch.cuda.graphs", "CUDAGraph", raw_cuda_graph=raw_cuda_graph)()


class _Handle:
    """Synthetic handle object converting to an address, as cuda.bindings handles do."""

    def __init__(self, address: int):
        self.address = address

    def __int__(self) -> int:
        return self.address


def fake_builder(address: int = 0x5000, finished: bool = True) -> Any:
    definition = synthetic_class("cuda.core._graph._graph_def", "GraphDefinition",
                                 handle=_Handle(address))()

    def graph_definition(self: Any) -> Any:
        if not finished:
            raise RuntimeError("graph_definition is not available while building")
        return definition

    return synthetic_class("cuda.core._graph._graph_builder", "GraphBuilder",
                           graph_definition=property(graph_definition))()


# ------------------------------------------------------------------------- recognised types

def test_torch_graph_gives_its_raw_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_torch = types.SimpleNamespace(__version__="0.0-synthetic",
                                       cuda=types.SimpleNamespace(current_device=lambda: 3))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    ref = graph_ref(fake_torch_graph(0x7F00_0000_1000))
    assert ref.address == 0x7F00_0000_1000 and ref.source == "torch.cuda.CUDAGraph"
    assert ref.framework == "torch 0.0-synthetic" and ref.device == 3


def test_subclass_of_a_framework_type_is_recognised() -> None:
    base = type(fake_torch_graph(0x2000))
    mine = type("MyGraph", (base,), {"__module__": "my_project.graphs"})
    assert graph_ref(mine()).address == 0x2000


def test_cupy_graph_gives_graph_attribute() -> None:
    graph = synthetic_class("cupy.cuda.graph", "Graph", graph=0x3000)()
    ref = graph_ref(graph)
    assert ref.address == 0x3000 and ref.source == "cupy.cuda.Graph"


def test_cuda_core_builder_and_definition() -> None:
    builder = fake_builder(0x5000)
    ref = graph_ref(builder)
    assert ref.address == 0x5000 and ref.source == "cuda.core GraphBuilder"
    ref = graph_ref(builder.graph_definition)
    assert ref.address == 0x5000 and ref.source == "cuda.core GraphDefinition"


def test_cuda_bindings_cugraph_and_address() -> None:
    driver = pytest.importorskip("cuda.bindings.driver")
    assert graph_ref(driver.CUgraph(0x6000)).address == 0x6000
    assert graph_ref(0x6000).address == 0x6000 and graph_ref(0x6000).source == "address"


# ---------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("obj,name", [
    (object(), "builtins.object"), ("0x1234", "builtins.str"), (None, "builtins.NoneType"),
    (3.5, "builtins.float"),
    (synthetic_class("torch", "Tensor")(), "torch.Tensor"),
    (synthetic_class("cupy", "ndarray")(), "cupy.ndarray"),
])
def test_unreadable_object_names_its_type_and_the_types_taken(obj: Any, name: str) -> None:
    with pytest.raises(InputError) as info:
        graph_ref(obj)
    line = info.value.one_line()
    assert name in line and "torch.cuda.CUDAGraph(keep_graph=True)" in line
    assert "cupy.cuda.Graph" in line and "GraphBuilder" in line and "\n" not in line


def test_torch_graph_without_keep_graph_says_how_to_fix() -> None:
    graph = fake_torch_graph(error="You cannot access the raw cudaGraph_t instance unless "
                                   "CUDAGraph was initialized with keep_graph=True")
    with pytest.raises(InputError, match="without keep_graph=True") as info:
        graph_ref(graph)
    assert "torch.cuda.CUDAGraph(keep_graph=True)" in info.value.one_line()


def test_torch_graph_other_error_is_one_line() -> None:
    graph = fake_torch_graph(error="capture_end() has not been called\nsecond line")
    with pytest.raises(InputError, match="could not hand over the graph") as info:
        graph_ref(graph)
    assert "second line" not in info.value.one_line()


@pytest.mark.parametrize("obj,word", [
    (synthetic_class("cupy.cuda.graph", "Graph", graph=0)(), "holds no graph"),
    (synthetic_class("cupy.cuda.graph", "Graph")(), "has no .graph"),
    (synthetic_class("cuda.core._graph", "Graph")(), "executable graph"),
    (fake_builder(finished=False), "end_building"),
    (True, "cannot read a builtins.bool"), (0, "holds no graph"), (-5, "not a CUgraph address"),
    (1 << 70, "not a CUgraph address"),
])
def test_bad_graph_objects(obj: Any, word: str) -> None:
    with pytest.raises(InputError, match=word):
        graph_ref(obj)


def test_cuda_bindings_exec_handle_is_refused() -> None:
    driver = pytest.importorskip("cuda.bindings.driver")
    with pytest.raises(InputError, match="executable graph"):
        graph_ref(driver.CUgraphExec(0x1234))


def test_recognising_imports_no_framework() -> None:
    code = ("import sys, graphcert, graphcert.sources as s\n"
            "for obj in (object(), 5):\n"
            "    try: s.graph_ref(obj)\n"
            "    except graphcert.errors.InputError: pass\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('torch', 'cupy', 'numpy')\n"
            "       or m.startswith('cuda')]\n"
            "assert not bad, bad\n")
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)


# ------------------------------------------------------------------- reading and the API

def synthetic_snapshot(grid: int = 1, meta: dict[str, Any] | None = None) -> Any:
    """A SYNTHETIC two-node graph (memset -> kernel), not a GPU recording."""
    raw = RawGraph((RawNode(0, NodeKind.MEMSET, {"element_size": 4, "width": 8, "height": 1,
                                                 "value": 0, "bytes": 32}),
                    RawNode(1, NodeKind.KERNEL, {"name": "synthetic_k", "grid": [grid, 1, 1],
                                                 "block": [128, 1, 1], "shared_mem_bytes": 0,
                                                 "param_sizes": [8]})),
                   ((0, 1),))
    return snapshot_from_raw(raw, meta=meta or {"synthetic": True})


def test_snapshot_of_reads_the_address_with_meta(monkeypatch: pytest.MonkeyPatch) -> None:
    handles = pytest.importorskip("graphcert.cuda.handles")
    seen: dict[str, Any] = {}

    def fake_read(address: int, *, meta: dict[str, Any], device: int | None) -> Any:
        seen.update(address=address, meta=meta, device=device)
        return synthetic_snapshot(meta=meta)

    monkeypatch.setattr(handles, "read_foreign_graph", fake_read)
    snap = graphcert.snapshot(synthetic_class("cupy.cuda.graph", "Graph", graph=0x3000)(),
                              name="step-b8")
    assert seen["address"] == 0x3000
    assert snap.meta == {"source": "cupy.cuda.Graph", "name": "step-b8"}
    assert snapshot_of(0x4000).meta == {"source": "address"}


def test_graph_from_address_rejects_non_addresses() -> None:
    handles = pytest.importorskip("graphcert.cuda.handles")
    for bad in (0, -1, 1 << 64, True):
        with pytest.raises(InputError):
            handles.graph_from_address(bad)
    assert int(handles.graph_from_address(0x1234)) == 0x1234


def test_public_api_save_load_diff(tmp_path: Path) -> None:
    a, b = synthetic_snapshot(1), synthetic_snapshot(4)
    path = graphcert.save(a, tmp_path / "a.json")
    assert graphcert.load(path) == a
    same = graphcert.diff(path, a)
    assert same.identical and same.topology_equal
    d = graphcert.diff(a, b)
    assert d.topology_equal and not d.shape_equal
    assert any("grid" in line for line in d.summary_lines())


def test_public_api_load_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(GraphcertError, match="no such file"):
        graphcert.load(tmp_path / "missing.json")
    with pytest.raises(InputError, match="cannot read a builtins.list"):
        graphcert.snapshot([1, 2])
