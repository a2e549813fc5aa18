"""What a user meets when the gate fails, at every width: a failing rule of every certificate
kind (topology, bench, sweep, plan, profile, record) at 80, 120 and 200 columns and piped.

The inputs are recorded certificates (reports/, tests/fixtures/record) whose workload
sources did not change, copied and gated with a policy each one fails (its method digest is
let through as a warning: a re-record is not needed to read the failure lines). The profile
is failed against a baseline whose one node has another kernel (resealed), so the failure
names kernels. Every word of the piped output must be a word of the terminal's (no token
split, a path shown whole or, on a terminal too narrow for it, whole under its folder); no
line holds only a count; no kernel name is shown mangled (`_Z...`); no line is wider than
the terminal.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from graphcert.cert.document import compute_digest
from graphcert.cli import cli
from graphcert.render import console as consoles

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
WIDTHS = (80, 120, 200)
RECORDED = ("topology-chain", "bench-chain", "sweep-chain_kernels", "record-serve_torch",
            "plan-torch_decode_traffic_sha256-b1e63a4347f1", "profile-torch_decode")
POLICY = """method_change = "warn"
min_speedup = 1000.0
max_nodes = 1
max_plan_regret = 0.0
min_graph_coverage = 0.99
max_instantiations_per_topology = 1
max_steady_eager_launches = 0
"""
# a mangled name no node of the recorded profile has (CUDAFunctor_add's, with float)
OTHER = ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIP"
         "cLm3EEEEviT0_T1_")
ONLY_A_COUNT = re.compile(r"^\s*[\d,]+( ×| eager launch\(es\):?)?\s*$")


@pytest.fixture(scope="module")
def inputs() -> Iterator[tuple[Path, Path, Path]]:
    """(certificates, baseline folder, policy), every kind failing. A short folder: a
    baseline path is printed in a failure line, and pytest's own are wider than 80."""
    root = Path(tempfile.mkdtemp(prefix="gc"))
    current, base = root / "current", root / "base"
    current.mkdir()
    base.mkdir()
    for name in RECORDED:
        (path,) = (ROOT / "reports").glob(f"{name}-NVIDIA*.json")
        shutil.copy(path, current / path.name)
    for path in (ROOT / "tests" / "fixtures" / "record").iterdir():
        # the snapshots too: the report draws their graphs (cuBLAS's long nvjet names)
        if path.is_dir():
            shutil.copytree(path, current / path.name)
        else:
            shutil.copy(path, current / path.name)
    (profile,) = (ROOT / "reports").glob("profile-torch_decode-*.json")
    doc = json.loads(profile.read_text())
    doc["results"]["classes"][0]["profile"]["nodes"][2]["name"] = OTHER
    doc["digest"] = compute_digest(doc)
    (base / profile.name).write_text(json.dumps(doc))
    policy = root / "gate.toml"
    policy.write_text(POLICY)
    yield current, base, policy
    shutil.rmtree(root)


def gate_output(monkeypatch: pytest.MonkeyPatch, inputs: tuple[Path, Path, Path],
                width: int | None) -> str:
    """The gate's stdout at a `width`-column terminal (None: piped), colour taken out."""
    current, base, policy = inputs
    monkeypatch.chdir(ROOT)  # where the workloads' sources are
    monkeypatch.setenv("COLUMNS", str(width or 80))
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setattr(consoles, "isatty", lambda stream: width is not None)
    result = CliRunner().invoke(cli, ["gate", str(current), "--baseline", str(base),
                                      "--policy", str(policy)], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    return ANSI.sub("", result.stdout)


def split_tokens(piped: str, shown: str) -> list[str]:
    """The words of the piped output that the terminal's output does not hold whole."""
    # a table column moved under its row is labelled ("file:"): the label is the header
    words = {w.removesuffix(":") for w in shown.split()}
    folder = re.search(r"^files in (\S+)/$", shown, re.MULTILINE)
    missing = []
    for word in {w.removesuffix(":") for w in piped.split()}:
        if word in words:
            continue
        if folder and word.startswith(folder[1] + "/") and word[len(folder[1]) + 1:] in words:
            continue
        missing.append(word)
    return sorted(missing)


def test_the_piped_failure_lines_name_every_kind(monkeypatch: pytest.MonkeyPatch,
                                                 inputs: tuple[Path, Path, Path]) -> None:
    piped = gate_output(monkeypatch, inputs, None)
    failed = {m[1] for m in re.finditer(r"^  FAIL .* (\w+) on .*? \[(\w+)\]", piped, re.M)}
    assert failed == {"topology", "bench", "sweep", "plan", "profile", "record"}, piped
    assert "_Z" not in piped
    assert "vectorized_elementwise_kernel<…GeluCUDAKernelImpl…>" in piped


@pytest.mark.parametrize("width", WIDTHS)
def test_failure_lines_keep_every_token_whole(monkeypatch: pytest.MonkeyPatch,
                                              inputs: tuple[Path, Path, Path],
                                              width: int) -> None:
    piped = gate_output(monkeypatch, inputs, None)
    shown = gate_output(monkeypatch, inputs, width)
    assert split_tokens(piped, shown) == []
    lines = shown.splitlines()
    assert [line for line in lines if ONLY_A_COUNT.match(line)] == []
    assert [line for line in lines if cell_len(line) > width] == []
    assert not re.search(r"\b_Z\w", shown)
