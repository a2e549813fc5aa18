"""The native C++ loop of the fidelity benchmarks builds, as an executable
(benchmarks/native_graph_loop.sh) and as the shared library benchmarks/native_in_process.py
loads (through that script's own build()), whose native_main it calls. Compiling needs nvcc,
not a GPU (skipped without nvcc)."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH: the native loop cannot build")
def test_the_native_loop_builds_as_a_program_and_as_a_library(tmp_path: Path) -> None:
    done = subprocess.run([str(NVCC), "-O2", "-std=c++17", "-arch=sm_90",
                           str(BENCHMARKS / "native_graph_loop.cu"), "-o",
                           str(tmp_path / "native_graph_loop")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "native_graph_loop").stat().st_size > 0
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import native_in_process
    finally:
        sys.path.remove(str(BENCHMARKS))
    lib = native_in_process.build("sm_90", tmp_path)
    assert callable(ctypes.CDLL(str(lib)).native_main)  # loading runs no CUDA call
