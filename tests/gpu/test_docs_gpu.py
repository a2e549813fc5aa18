"""The docs' `python gpu` blocks (README.md, docs/*.md) run on a GPU, as the CPU tier runs
the others (tests/project/test_docs_code_blocks.py): each as a script in a fresh folder. A block
whose framework is not installed skips with that reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.project.test_docs_code_blocks import ALL, Block, check_ran, make_workspace, run_block

GPU_PYTHON = [b for b in ALL if b.lang == "python" and "gpu" in b.flags]
MISSING = re.compile(r"ModuleNotFoundError: No module named '(torch|cupy|cuda\.core)'")


@pytest.mark.parametrize("block", GPU_PYTHON, ids=lambda b: b.where)
def test_gpu_doc_block_runs(block: Block, gpu_ctx: object, tmp_path: Path) -> None:
    done = run_block(block, tmp_path, make_workspace(tmp_path))
    missing = MISSING.search(done.stderr)
    if done.returncode != 0 and missing:
        pytest.skip(f"{block.where}: {missing.group(1)} is not installed")
    check_ran(block, done)
