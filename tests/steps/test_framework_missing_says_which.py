"""FrameworkMissing has two causes, and its one line names which (docs/python-api.md): the
framework is not installed, or it is installed and has no device. Synthetic stand-ins for
the frameworks' modules make both reachable on a machine with neither a framework nor a
GPU; the driver is made absent by the `no_driver` fixture."""

from __future__ import annotations

import sys
import types

import pytest

from graphcert.errors import FrameworkMissing, InputError
from graphcert.frameworks.adapters import adapter_for


def test_not_installed_says_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "cuda.core", None)  # importing it raises ImportError
    monkeypatch.setitem(sys.modules, "torch", None)
    for framework, label in (("cuda.core", "cuda.core"), ("torch", "PyTorch")):
        with pytest.raises(FrameworkMissing) as info:
            adapter_for(framework)
        assert info.value.one_line().startswith(f"{label} is not installed")
        assert isinstance(info.value, InputError)  # the CLI's exit 2


def test_cuda_core_installed_without_a_gpu_says_so(monkeypatch: pytest.MonkeyPatch,
                                                   no_driver: None) -> None:
    synthetic = types.ModuleType("cuda.core")  # synthetic: an installed cuda.core
    synthetic.Device = object  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cuda.core", synthetic)
    with pytest.raises(FrameworkMissing) as info:
        adapter_for("cuda.core")
    line = info.value.one_line()
    assert line.startswith("cuda.core has no CUDA device to use: no NVIDIA driver found")
    assert "not installed" not in line


def test_torch_installed_without_a_gpu_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    synthetic = types.ModuleType("torch")  # synthetic: a CPU-only PyTorch build
    synthetic.__version__ = "0.0-synthetic"  # type: ignore[attr-defined]
    synthetic.version = types.SimpleNamespace(cuda=None)  # type: ignore[attr-defined]
    synthetic.cuda = types.SimpleNamespace(is_available=lambda: False)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", synthetic)
    with pytest.raises(FrameworkMissing) as info:
        adapter_for("torch")
    assert info.value.one_line().startswith(
        "PyTorch 0.0-synthetic has no CUDA device to use")
