"""The native C++ loop of the fidelity benchmarks builds, as an executable
(benchmarks/native_graph_loop.sh) and as the shared library benchmarks/native_in_process.py
loads, whose native_main it calls. Compiling needs nvcc, not a GPU (skipped without nvcc)."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "benchmarks" / "native_graph_loop.cu"
NVCC = shutil.which("nvcc")


def _nvcc(*args: str) -> None:
    done = subprocess.run([str(NVCC), "-O2", "-std=c++17", "-arch=sm_90", *args, str(SOURCE)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH: the native loop cannot build")
def test_the_native_loop_builds_as_a_program_and_as_a_library(tmp_path: Path) -> None:
    _nvcc("-o", str(tmp_path / "native_graph_loop"))
    lib = tmp_path / "libnative_graph_loop.so"
    _nvcc("-shared", "-Xcompiler", "-fPIC", "-DNATIVE_LIBRARY", "-o", str(lib))
    assert (tmp_path / "native_graph_loop").stat().st_size > 0
    assert callable(ctypes.CDLL(str(lib)).native_main)  # loading runs no CUDA call
