"""The committed reference reports pass the gate, and go stale when a kernel changes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _gate(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    return subprocess.run([sys.executable, "-m", "graphcert", "gate", "reports/"], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)


def test_reference_reports_pass_the_gate() -> None:
    """A topology and a bench certificate for each of the 7 built-ins and the 3 framework-step
    examples, chain's sweep over kernels=1,10,100,1000 (the sweep certificate and a bench
    certificate per value), the profiles of chain, scan, converge and the PyTorch step, the
    plans of the PyTorch step for two traffic mixes, and the records of the serving example's
    good run, its model in a spawned engine process and on two worker processes (one a GPU),
    the native C++ server, and a torch.compile(mode="reduce-overhead") program: 36, all
    current; the gate passes them without a warning (issue 30: no figure a rule rests on ended
    short of its target), alone and against the profiles' baseline (reports/.baseline)."""
    assert len(list((ROOT / "reports").glob("*.json"))) == 36
    assert len(list((ROOT / "reports").glob("sweep-chain_kernels-*.json"))) == 1
    proc = _gate(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "36 certificates, 0 failed;" in proc.stdout.splitlines()[0]
    assert proc.stdout.rstrip().splitlines()[-1] == "gate: PASS (0 failed rule(s), 0 warning(s))"
    kinds = sorted(p.name.split("-")[0] for p in (ROOT / "reports").glob("*.json"))
    assert {k: kinds.count(k) for k in set(kinds)} == {
        "topology": 10, "bench": 14, "sweep": 1, "profile": 4, "plan": 2, "record": 5}
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    ci = subprocess.run([sys.executable, "-m", "graphcert", "gate", "reports/", "--baseline",
                         "reports/.baseline"], cwd=ROOT, env=env, capture_output=True,
                        text=True, timeout=120)  # as .ci/run gates them
    assert ci.returncode == 0, ci.stdout + ci.stderr
    assert "max_node_regression pass" in ci.stdout
    assert ci.stdout.rstrip().splitlines()[-1] == "gate: PASS (0 failed rule(s), 0 warning(s))"
