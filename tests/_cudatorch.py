"""PyTorch with CUDA for a GPU test, or a skip with its own reason (absent, or built without
CUDA): an optional framework that is missing is a skip, never a driver error."""

from __future__ import annotations

from typing import Any

import pytest


def cuda_torch() -> Any:
    """The torch module, built with CUDA; the test is skipped, with the reason, otherwise."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if torch.version.cuda is None:
        pytest.skip(f"PyTorch {torch.__version__} was built without CUDA")
    return torch
