"""check(): driver and NVRTC results become errors naming the call, CUDA name and fix."""

from __future__ import annotations

import pytest
from cuda.bindings import driver, nvrtc

from graphcert.cuda.check import check
from graphcert.errors import CudaError, NoDriverError


def test_success_unwraps_values() -> None:
    assert check((driver.CUresult.CUDA_SUCCESS,), "cuX") is None
    assert check((driver.CUresult.CUDA_SUCCESS, 7), "cuX") == 7
    assert check((driver.CUresult.CUDA_SUCCESS, 1, 2), "cuX") == (1, 2)


def test_error_names_call_cuda_name_and_fix() -> None:
    with pytest.raises(CudaError) as info:
        check((driver.CUresult.CUDA_ERROR_OUT_OF_MEMORY, None), "cuMemAlloc")
    err = info.value
    assert err.call == "cuMemAlloc"
    assert err.name == "CUDA_ERROR_OUT_OF_MEMORY"
    assert err.code == 2
    line = err.one_line()
    assert line.startswith("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2)")
    assert "smaller --size" in line
    assert "\n" not in line


def test_capture_error_hint_suggests_setup_or_relaxed() -> None:
    with pytest.raises(CudaError) as info:
        check((driver.CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,), "cuMemAlloc")
    assert "relaxed" in info.value.one_line()


def test_explicit_hint_wins() -> None:
    with pytest.raises(CudaError) as info:
        check((driver.CUresult.CUDA_ERROR_INVALID_VALUE,), "cuLaunchKernel", hint="do X")
    assert info.value.hint == "do X"


def test_no_device_is_its_own_error() -> None:
    with pytest.raises(NoDriverError) as info:
        check((driver.CUresult.CUDA_ERROR_NO_DEVICE,), "cuInit")
    assert "no NVIDIA driver" in str(info.value)


def test_nvrtc_results_map_too() -> None:
    with pytest.raises(CudaError) as info:
        check((nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_OPTION,), "nvrtcCompileProgram")
    assert info.value.name == "NVRTC_ERROR_INVALID_OPTION"
    assert "invalid option" in info.value.text.lower()
