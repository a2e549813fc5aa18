"""The injection collector on a GPU: a small native CUDA program (built here with nvcc: one
eager launch, a captured two-kernel graph replayed 5 times inside an NVTX range) run with
CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH and the exit hook, and its stream read back
line by line against docs/record-streams.md. Ends by exit and by _exit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from graphcert.injection import Built, build

PROGRAM = r"""
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <unistd.h>
__global__ void add_one_value(float *x, int n, float v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += v;
}
int main(int argc, char **argv) {
    float *x;
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t e;
    cudaMalloc(&x, 1 << 20);
    cudaStreamCreate(&s);
    add_one_value<<<4, 256, 0, s>>>(x, 1024, 1.0f);
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    add_one_value<<<4, 256, 0, s>>>(x, 1024, 1.0f);
    add_one_value<<<4, 256, 0, s>>>(x, 1024, 2.0f);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&e, g, 0);
    nvtxRangePushA("replays");
    for (int i = 0; i < 5; i++) cudaGraphLaunch(e, s);
    nvtxRangePop();
    if (cudaStreamSynchronize(s) != cudaSuccess) return 1;
    cudaGraphExecDestroy(e);
    cudaGraphDestroy(g);
    if (argc > 1) _exit(atoi(argv[1]));
    return 0;
}
"""


@pytest.fixture(scope="module")
def built() -> Built:
    return build()


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory, gpu_ctx: object) -> Path:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc on PATH")
    folder = tmp_path_factory.mktemp("injection")
    source = folder / "graph_loop.cu"
    source.write_text(PROGRAM, encoding="utf-8")
    exe = folder / "graph_loop"
    subprocess.run([nvcc, "-O2", str(source), "-o", str(exe)], check=True)
    return exe


def _run(built: Built, program: Path, tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = {**os.environ, "GRAPHCERT_RUN_DIR": str(run_dir),
           "CUDA_INJECTION64_PATH": str(built.collector),
           "NVTX_INJECTION64_PATH": str(built.libcupti), "LD_PRELOAD": str(built.exit_hook)}
    done = subprocess.run([str(program), *args], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert done.returncode == (int(args[0]) if args else 0), done.stderr
    (stream,) = run_dir.iterdir()
    return [json.loads(line) for line in stream.read_text(encoding="utf-8").splitlines()]


def _of(lines: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [line for line in lines if line["t"] == t]


@pytest.mark.parametrize(("args", "how", "code"), [((), "exit", None), (("3",), "_exit", 3)])
def test_a_native_graph_loop_is_recorded(built: Built, program: Path, tmp_path: Path,
                                         args: tuple[str, ...], how: str,
                                         code: int | None) -> None:
    lines = _run(built, program, tmp_path, *args)
    assert lines[0]["t"] == "process" and not _of(lines, "error"), lines[:3]
    end = lines[-1]
    assert (end["t"], end["how"], end["code"]) == ("end", how, code)
    names = {line["id"]: line["s"] for line in _of(lines, "str")}

    (device,) = _of(lines, "device")
    assert device["uuid"].startswith("GPU-") and device["name"]

    (begin,), (captured,) = _of(lines, "capture_begin"), _of(lines, "capture_end")
    (inst,) = _of(lines, "inst")
    assert captured["stream"] == begin["stream"] and captured["graph"] == inst["graph"]
    assert inst["read_error"] is None and inst["exec_id"] is not None
    assert inst["t0"] <= inst["t1"]
    nodes = inst["snapshot"]["nodes"]
    assert [n["type"] for n in nodes] == [0, 0]
    for node in nodes:
        assert "add_one_value" in node["name"]
        assert (node["grid"], node["block"], node["param_sizes"]) == ([4, 1, 1], [256, 1, 1],
                                                                     [8, 4, 4])
        assert node["pointers"] == [[0, 0, node["pointers"][0][2]]]
        assert node["pointers"][0][2] >= 1 << 20
    assert inst["snapshot"]["edges"] == [[0, 1, 0, 0, 0]]

    launches = _of(lines, "glaunch")
    assert len(launches) == 5 and {g["graph_id"] for g in launches} == {inst["exec_id"]}
    assert all(g["start"] <= g["end"] for g in launches)

    # Graph kernels give no kernel records with GRAPH_TRACE on: the eager launch only.
    (kernel,) = _of(lines, "kernel")
    assert kernel["graph_id"] == 0 and "add_one_value" in names[kernel["name"]]
    assert kernel["corr"] in {c["corr"] for c in _of(lines, "call")}

    markers = _of(lines, "marker")
    assert [m["edge"] for m in markers] == ["start", "end"]
    assert names[markers[0]["name"]] == "replays" and markers[1]["name"] == 0

    (destroyed,) = _of(lines, "destroy")
    assert destroyed["exec"] == inst["exec"]
    assert [g["ordinal"] for g in _of(lines, "graphmem")] == [device["ordinal"]]
