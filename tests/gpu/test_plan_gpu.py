"""`graphcert plan` on the GPU (issue 35): the PyTorch decode step planned for the synthetic
skewed traffic mix prints a list in engines' forms; a plan certificate is written, valid, and
gated with max_plan_regret both ways (the limits come from the certificate's own figures: no
measured figure is written here); the model check replays a small sample.

The plan runs in a child process (as a user runs it); it skips only when PyTorch cannot run
(FrameworkMissing) or there is no GPU (the gpu_ctx fixture)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from graphcert.cert.document import validate_certificate
from graphcert.cert.evidence import contradictions
from graphcert.cert.schemas import load_schema
from graphcert.errors import FrameworkMissing
from graphcert.frameworks.adapters import adapter_for
from graphcert.kinds.plan.result import PlanResult
from tests._env import child_env

ROOT = Path(__file__).resolve().parents[2]
STEP = "examples/steps/torch_decode.py:DECODE"
SKEWED = ROOT / "examples" / "traffic" / "skewed.csv"


def _torch() -> None:
    try:
        adapter_for("torch")
    except FrameworkMissing as exc:
        pytest.skip(exc.one_line())


def _graphcert(*args: str, cwd: Path = ROOT, timeout: int = 600
               ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphcert", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env=child_env(COLUMNS="400", NO_COLOR="1"))


def test_plan_of_the_torch_step_for_the_skewed_mix_prints_a_list(gpu_ctx: object) -> None:
    _torch()
    run = _graphcert("plan", STEP, "--traffic", str(SKEWED), "--max-size", "64",
                     "--no-certificate")
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines[0].startswith(f"{STEP}[traffic=sha256-"), lines[:3]
    vllm = next(ln for ln in lines if ln.lstrip().startswith("vLLM"))
    assert "--cudagraph-capture-sizes" in vllm or "--enforce-eager" in vllm, vllm
    assert "vllm:64" in run.stdout and "sglang:64" in run.stdout
    assert "certificate:" not in run.stderr


def test_plan_certificate_is_valid_and_gated_both_ways(gpu_ctx: object, tmp_path: Path
                                                       ) -> None:
    _torch()
    # a small mix keeps the grid short: 1..32 from the presets and these sizes
    traffic = tmp_path / "small.csv"
    traffic.write_text("# SYNTHETIC traffic for a test\nsize,count\n1,60\n3,20\n17,15\n32,5\n")
    run = _graphcert("plan", str(ROOT / STEP), "--traffic", str(traffic), "--current",
                     "vllm:32", "--compare", "1,32", "--out", str(tmp_path / "r"), "--json")
    assert run.returncode in (0, 1), run.stderr[-3000:]  # 1: a compared list beat the plan
    out = json.loads(run.stdout)
    path = Path(out["certificate"])
    doc = json.loads(path.read_text())
    assert validate_certificate(doc) == [] and contradictions(doc) == []
    jsonschema.Draft202012Validator(load_schema("plan")).validate(doc)
    plan = PlanResult.from_json(doc["results"], doc["verdict"])
    assert [r.label for r in plan.comparisons] == ["vllm:32", "sglang:32", "1,32", "current"]
    # buckets are chosen among measured sizes only (the compared lists' buckets among them)
    assert set(plan.candidates) == {p.size for p in plan.curve.points if p.measured}
    assert plan.candidates[-1] == 32 and {1, 2, 4, 8, 16, 24, 32} <= set(plan.candidates)
    assert "costs: queued device medians" in plan.why  # torch_decode waits on nothing
    measured = [p for p in plan.curve.points if p.measured]
    assert {1, 32} <= {p.size for p in measured}
    assert all(p.replay_s > 0 and p.eager_s > 0 and p.capture_s > 0 for p in measured)
    assert any(p.pool_bytes > 0 for p in measured)  # PyTorch says what its pools hold
    assert run.returncode == (0 if plan.verdict.passed else 1)
    current = plan.current_row
    assert current is not None and current.buckets == (1, 2, 4, 8, 16, 24, 32)
    regret = plan.regret(current)
    # the exact plan is never beaten on its own curve by more than its tolerance (within it
    # the list with fewer graphs won)
    assert regret >= -plan.tolerance - 1e-9

    def gate(limit: float) -> subprocess.CompletedProcess[str]:
        policy = tmp_path / f"g{limit}.toml"
        policy.write_text(f"max_plan_regret = {limit!r}\n")
        return _graphcert("gate", str(tmp_path / "r"), "--policy", str(policy), timeout=120)

    passed = gate(max(regret, 0.0) + 0.01)
    assert passed.returncode == 0 and "max_plan_regret" in passed.stdout, passed.stdout[-2000:]
    if regret > 1e-6:  # vllm:32 is slower than the plan: a tighter limit fails the gate
        failed = gate(regret / 2)
        assert failed.returncode == 1, failed.stdout[-2000:]
        assert "max_plan_regret" in failed.stdout and "slower per step" in failed.stdout


def test_the_model_check_replays_a_sample(gpu_ctx: object, tmp_path: Path) -> None:
    _torch()
    traffic = tmp_path / "small.csv"
    traffic.write_text("# SYNTHETIC traffic for a test\nsize,count\n1,50\n5,30\n40,20\n")
    figures = tmp_path / "check.json"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "plan_replay_check.py"),
                          "--traffic", str(traffic), "--steps", "200", "--json",
                          str(figures)], cwd=ROOT, capture_output=True, text=True,
                         timeout=600, env=child_env())
    assert run.returncode in (0, 1), run.stderr[-3000:]  # 1: outside 5% (said, not hidden)
    doc = json.loads(figures.read_text())
    assert doc["steps"] == 200 and set(doc["lists"]) == {"plan", "vllm:40"}
    for figures_of in doc["lists"].values():
        assert figures_of["mean_s"] > 0 and figures_of["expected_s"] > 0
        assert figures_of["back_to_back_mean_s"] > 0
    assert "model check:" in run.stdout
    assert doc["passed"] == (run.returncode == 0)
