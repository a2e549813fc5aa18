"""The docs' code blocks run: every fenced block of README.md and docs/*.md that needs no GPU
is run here, so an example a user copies from the docs works as written.

A fence's info string says what the block is: its language first (`python`, `sh`, `bash`,
`console` are run; `text`, `yaml`, `toml` are shown, and `toml` (a gate policy) is loaded
as the gate loads a `--policy` file), then
optional flags: `gpu` (needs a GPU: skipped here) or `norun` (not meant to run as it is: an
install step, a Slurm script, a test file to adapt). A fence without a language fails.

Each block runs in a fresh folder holding the repository's `reports/`, `tests/`, `examples/`
and `pyproject.toml` (the paths the docs name; reports/ a copy), with `graphcert` on PATH as
`python -m graphcert` of this checkout: python blocks as a script, shell blocks by bash with
`-e -o pipefail` (every command must succeed; a block that shows a failure checks its
exit code itself).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
RUN = {"python", "sh", "bash", "console"}
SHOWN = {"text", "yaml", "toml"}
FLAGS = {"gpu", "norun"}
COPIED = ("reports", "pyproject.toml")  # a command may write there: a copy, never the checkout's
LINKED = ("tests", "examples")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it starts, its language and flags, its text."""

    path: Path
    line: int
    lang: str
    flags: frozenset[str]
    body: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a markdown file (a fence closes on the same fence characters)."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        fence, indent = m["fence"], len(m["indent"])
        words = m["info"].split()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and lines[i].strip() != fence:
            body.append(lines[i][indent:] if lines[i][:indent].isspace() else lines[i])
            i += 1
        found.append(Block(path, start, words[0] if words else "", frozenset(words[1:]),
                           "\n".join(body) + "\n"))
        i += 1
    return found


ALL = [b for path in DOCS for b in blocks(path)]
RUNNABLE = [b for b in ALL if b.lang in RUN and "norun" not in b.flags]


def test_every_fence_says_what_it_holds() -> None:
    wrong = [f"{b.where}: ```{b.lang} {' '.join(sorted(b.flags))}".rstrip() for b in ALL
             if b.lang not in RUN | SHOWN or not b.flags <= FLAGS
             or (b.flags and b.lang not in RUN) or len(b.flags) > 1]
    assert not wrong, ("give each fence a language (and `gpu` or `norun` where a runnable "
                       "one cannot run here):\n" + "\n".join(wrong))
    assert len(RUNNABLE) >= 5, "the docs show runnable examples"
    assert any("gpu" not in b.flags for b in RUNNABLE if b.lang == "python")
    assert any("gpu" not in b.flags for b in RUNNABLE if b.lang != "python")


@pytest.mark.parametrize("block", [b for b in ALL if b.lang == "toml"], ids=lambda b: b.where)
def test_shown_policies_load(block: Block, tmp_path: Path) -> None:
    from graphcert.gate import load_policy

    path = tmp_path / "policy.toml"
    path.write_text(block.body, encoding="utf-8")
    load_policy(path)  # a PolicyError (one line) names what the docs got wrong


def make_workspace(folder: Path) -> dict[str, str]:
    """Fill `folder` with the repository's data (reports/ and pyproject.toml copied, since a
    command may write there; tests/ and examples/ linked) and return an environment in which
    `graphcert` is this checkout's, with no colour, a fixed width and no graphcert settings
    of the caller's."""
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, folder / name)
        else:
            shutil.copy2(source, folder / name)
    for name in LINKED:
        (folder / name).symlink_to(ROOT / name)
    bin_dir = folder / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "graphcert"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m graphcert "$@"\n')
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GRAPHCERT_") and k not in ("GITHUB_STEP_SUMMARY", "FORCE_COLOR")}
    # this checkout first, then whatever the caller's path held (a machine whose packages were
    # installed with pip --target: the GPU tier's igraph on the device)
    path = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=path,
               NO_COLOR="1", COLUMNS="120", CI="1")
    return env


def run_block(block: Block, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a block as a user would paste it: python as a script, a shell block by bash."""
    if block.lang == "python":
        argv = [sys.executable, "-c", block.body]
    else:
        argv = ["bash", "-e", "-o", "pipefail", "-c", block.body]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def check_ran(block: Block, done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, (
        f"{block.where} ({block.lang}) exited {done.returncode}:\n{block.body}\n"
        f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: f"{b.where}-{b.lang}")
def test_doc_block_runs(block: Block, tmp_path: Path) -> None:
    if "gpu" in block.flags:
        pytest.skip(f"{block.where}: needs a GPU (its fence says `{block.lang} gpu`; "
                    f"tests/gpu/test_docs_gpu.py runs the python ones on a GPU)")
    check_ran(block, run_block(block, tmp_path, make_workspace(tmp_path)))


def test_the_exit_code_table_names_every_command_and_code() -> None:
    from graphcert.cli import COMMANDS
    from graphcert.errors import ExitStatus

    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:-1] for line in section.splitlines() if line.startswith("| ")]
    header, body = [c.strip() for c in rows[0]], rows[1:]
    named = {cell[0].strip().strip("`").split()[0] for cell in body}
    assert named == set(COMMANDS), f"commands missing from the table: {set(COMMANDS) - named}"
    codes = {int(c) for c in header[1:]} | {int(n) for n in re.findall(r"\*\*(\d+)\*\*", section)}
    assert codes == {int(s) for s in ExitStatus}, codes
