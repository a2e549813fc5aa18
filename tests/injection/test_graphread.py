"""The collector's graph reader (graphcert/injection/graphread.c, kernread.c, drv.c) on CPU,
against fake_driver.c: a SYNTHETIC libcuda.so.1 whose cuGetProcAddress_v2 hands out made-up
graph queries for two made-up graphs. It checks the snapshot JSON of docs/record-streams.md
(fields, parameter bytes, pointer classification as graphcert/cuda/params.py, edges with
their data, child graphs, an unread conditional) and the read error; what the real driver
answers is checked on the GPU machine."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
build_module = importlib.import_module("graphcert.injection.build")
ALLOC_BASE = 0x7F0000000000  # fake_driver.c's one allocation (4096 bytes)

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None and shutil.which("gcc") is None,
    reason="no C compiler on this machine")


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """read_graph_main linked to the synthetic libcuda.so.1 (found by rpath)."""
    out = tmp_path_factory.mktemp("fake-driver")
    cc = build_module.find_compiler()
    include = f"-I{build_module.find_cuda_include()}"
    strict = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"]
    fake = out / "libcuda.so.1"
    subprocess.run([*cc, *strict, "-shared", "-fPIC", include, str(HERE / "fake_driver.c"),
                    "-o", str(fake), "-Wl,-soname,libcuda.so.1"], check=True)
    source = build_module.SOURCE_DIR
    exe = out / "read_graph"
    subprocess.run([*cc, *strict, "-pthread", f"-I{source}", include,
                    str(HERE / "read_graph_main.c"),
                    *(str(source / name) for name in ("graphread.c", "kernread.c", "drv.c",
                                                      "jsonout.c")),
                    str(fake), f"-Wl,-rpath,{out}", "-ldl", "-o", str(exe)], check=True)
    return exe


def _read(reader: Path, which: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(reader), str(which)], capture_output=True, text=True,
                          check=False)


@pytest.fixture(scope="module")
def snapshot(reader: Path) -> dict[str, Any]:
    done = _read(reader, 1)
    assert done.returncode == 0, done.stdout + done.stderr
    loaded: dict[str, Any] = json.loads(done.stdout)
    return loaded


def test_nodes_come_in_the_drivers_order_with_their_types(snapshot: dict[str, Any]) -> None:
    assert [n["type"] for n in snapshot["nodes"]] == [0, 1, 2, 4, 0, 13]


def test_a_kernel_node_has_its_launch_shape_parameters_and_pointers(
        snapshot: dict[str, Any]) -> None:
    kernel = snapshot["nodes"][0]
    assert kernel["name"] == 'k_add"quoted"'
    assert (kernel["grid"], kernel["block"], kernel["smem"]) == ([4, 1, 1], [128, 1, 1], 256)
    assert kernel["param_sizes"] == [8, 4, 24]
    p, n, s = (bytes.fromhex(h) for h in kernel["params"])
    assert int.from_bytes(p, "little") == ALLOC_BASE + 16 and int.from_bytes(n, "little") == 7
    assert len(s) == 24
    # the 8-byte parameter: [index, offset, size]; the struct's word: + [byte, word]
    assert kernel["pointers"] == [[0, 16, 4096], [2, 32, 4096, 8, ALLOC_BASE + 32]]
    assert (kernel["cooperative"], kernel["cluster"], kernel["priority"]) == (1, None, -2)


def test_a_library_kernel_reads_its_extra_buffer_without_param_sizes(
        snapshot: dict[str, Any]) -> None:
    kernel = snapshot["nodes"][4]
    assert kernel["name"] == "library_kernel" and kernel["param_sizes"] is None
    assert kernel["params"] == ["0300000000000000", "04000000"]
    assert kernel["pointers"] == []
    assert (kernel["cooperative"], kernel["cluster"], kernel["priority"]) == (None, None, None)


def test_copies_sets_children_and_conditionals(snapshot: dict[str, Any]) -> None:
    memcpy, memset, child, conditional = (snapshot["nodes"][i] for i in (1, 2, 3, 5))
    # the destination is a unified address the driver places on the device
    assert memcpy == {"type": 1, "src": "H", "dst": "D", "width": 64, "height": 1, "depth": 1}
    assert memset == {"type": 2, "element_size": 4, "width": 16, "height": 1, "value": 0}
    assert child["child"] == {"nodes": [{"type": 5}, {"type": 10, "bytes": 1 << 20}],
                              "edges": [[0, 1, 0, 0, 0]]}
    assert conditional == {"type": 13, "unread": "the driver has no cuGraphNodeGetParams"}


def test_edges_index_nodes_and_carry_their_data(snapshot: dict[str, Any]) -> None:
    assert snapshot["edges"] == [[0, 1, 0, 0, 0], [1, 2, 0, 0, 0], [0, 4, 1, 1, 0]]


def test_a_failed_query_is_the_reads_error(reader: Path) -> None:
    done = _read(reader, 2)
    assert (done.returncode, done.stdout) == (1, "error: cuGraphGetNodes: "
                                                 "CUDA_ERROR_INVALID_VALUE\n")
