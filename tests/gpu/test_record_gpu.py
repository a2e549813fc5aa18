"""graphcert record on a GPU: examples/record/serve_torch.py recorded in a child
process (CUPTI allows one subscriber per process), one test per flag, gated with
examples/record/policy.toml; a program that runs torch.profiler itself; Ctrl-C and SIGTERM
mid-run. Each child is `python -m graphcert record ...` from the repository root."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from graphcert.render.names import short_name

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = "examples/record/serve_torch.py"
POLICY = ROOT / "examples" / "record" / "policy.toml"
STEPS = "600"


@pytest.fixture(autouse=True)
def _cuda(gpu_ctx: object) -> None:
    """Skips without a driver (gpu_ctx); PyTorch must see the GPU too."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")


def _graphcert(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphcert", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=timeout, check=False)


def _record(out: Path, *flags: str) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    done = _graphcert("record", "--out", str(out), "--", sys.executable, EXAMPLE, "--steps", STEPS,
                      *flags)
    assert done.returncode == 0, done.stderr[-3000:]
    (cert,) = out.glob("record-*.json")
    return json.loads(cert.read_text()), done


def _graphs(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every graph row of every recorded process."""
    return [g for p in results["processes"] for g in p["graphs"]]


def _churn(results: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for p in results["processes"] for c in p["churn"]]


def _gate(out: Path) -> subprocess.CompletedProcess[str]:
    return _graphcert("gate", str(out), "--policy", str(POLICY), "--json")


def test_good_run_passes_the_coverage_policy(tmp_path: Path) -> None:
    doc, done = _record(tmp_path)
    results = doc["results"]
    print(done.stderr[-2500:])  # the summary, for the log
    graphs = _graphs(results)
    assert len(graphs) == 9 and all(g["topology_hash"] for g in graphs)
    assert all(g["made"] == "capture" and g["launches"] > 0 for g in graphs)
    snapshots = list(tmp_path.glob("record-*.snapshots/*.json"))
    assert 1 <= len(snapshots) <= 9  # one per topology and shape (buckets may share one)
    assert all(g["snapshot_file"] for g in graphs)
    assert _churn(results) == []  # buckets alive together are not churn
    inv = _graphcert("inventory", str(snapshots[0]))
    assert inv.returncode == 0, inv.stderr
    gate = _gate(tmp_path)
    assert gate.returncode == 0, gate.stdout + gate.stderr


def test_fallback_fails_the_gate_naming_the_eager_kernels(tmp_path: Path) -> None:
    doc, _ = _record(tmp_path, "--fallback")
    eager = doc["results"]["overall"]["coverage"]["steady_eager"]
    assert eager, "the left-out bucket's sizes ran eager: their kernels must be named"
    gate = _gate(tmp_path)
    print(gate.stdout[-2500:])
    assert gate.returncode == 1
    # the gate's details name kernels as every human view does: demangled, shortened so the
    # op stays in sight (render.names.short_name)
    assert "min_graph_coverage" in gate.stdout and short_name(eager[0]["name"]) in gate.stdout
    # the example runs its eager path inside NVTX range "eager b16": the launches are
    # attributed to it (NVTX routed to libcupti, MARKER and launch-call records joined)
    nvtx = doc["results"]["overall"]["nvtx"]
    assert nvtx["unavailable"] is None and nvtx["ranges"] > 0, nvtx
    top = nvtx["regions"][0]
    assert top["region"] == "eager b16" and top["count"] == sum(e["count"] for e in eager)
    assert "NVTX range eager b16" in gate.stdout


def test_recapture_fails_the_gate_naming_the_churned_topology(tmp_path: Path) -> None:
    doc, _ = _record(tmp_path, "--recapture", "100")
    (churn,) = _churn(doc["results"])
    # captured at the start, then again at steps 100..500, each after the old one was freed
    assert churn["instantiations"] - churn["peak_alive"] == 5
    gate = _gate(tmp_path)
    print(gate.stdout[-2500:])
    assert gate.returncode == 1 and churn["topology_hash"][:12] in gate.stdout


# A program that holds CUPTI itself (the PyTorch profiler, started first) and then asks for
# graphcert's recording: refused in one line (graphcert.record() raises CuptiUnavailable).
PROFILED_FIRST = """
import sys
import torch
import graphcert
from graphcert.errors import GraphcertError
x = torch.randn(64, 64, device="cuda")
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
    y = x @ x
    torch.cuda.synchronize()
    try:
        with graphcert.record():
            y = x @ x
    except GraphcertError as exc:
        print(exc.one_line())
        sys.exit(2)
print("recorded under the profiler")
"""

# The other order (the CLI case): graphcert record holds CUPTI and the program starts
# the profiler: on an H100 the profiler then records no CUDA event while graphcert's
# recording stays whole (tools/probes/record_probe.py): docs/commands.md says so.
PROFILED_INSIDE = """
import torch
x = torch.randn(64, 64, device="cuda")
g = torch.cuda.CUDAGraph()
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    y = x @ x
torch.cuda.synchronize()
with torch.cuda.graph(g):
    y = x @ x
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(100):
        g.replay()
    torch.cuda.synchronize()
print("profiler events", len(prof.events()))
"""


def test_a_program_holding_cupti_itself_is_refused_in_one_line(tmp_path: Path) -> None:
    app = tmp_path / "profiled.py"
    app.write_text(PROFILED_FIRST)
    done = subprocess.run([sys.executable, str(app)], cwd=ROOT, text=True,
                          capture_output=True, timeout=300, check=False)
    print(done.stdout[-1500:], done.stderr[-2500:])
    assert done.returncode == 2, done.stderr[-2000:]
    (line,) = [ln for ln in done.stdout.splitlines() if ln.strip()]
    assert "CUPTI" in line and "Traceback" not in done.stderr


def test_the_profiler_started_under_record_leaves_the_recording_whole(tmp_path: Path) -> None:
    app = tmp_path / "profiled.py"
    app.write_text(PROFILED_INSIDE)
    done = _graphcert("record", "--out", str(tmp_path / "out"), "--", sys.executable, str(app))
    print(done.stdout[-1500:], done.stderr[-2500:])
    assert done.returncode == 0, done.stderr[-2000:]
    (cert,) = (tmp_path / "out").glob("record-*.json")
    doc = json.loads(cert.read_text())
    launched = sum(int(g.get("launches", 0)) for g in _graphs(doc["results"]))
    assert launched >= 100


@pytest.mark.parametrize(("sig", "code", "ended"), [(signal.SIGINT, 130, "interrupted"),
                                                    (signal.SIGTERM, 143, "terminated")])
def test_a_signal_mid_run_keeps_what_was_recorded(tmp_path: Path, sig: int, code: int,
                                                   ended: str) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "graphcert", "record", "--out", str(tmp_path), "--", sys.executable,
         EXAMPLE, "--steps", "200000"], cwd=ROOT, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert child.stdout is not None
    line = child.stdout.readline()  # "serve_torch: serving" once the graphs are captured
    assert "serving" in line, line
    time.sleep(1.0)
    child.send_signal(sig)
    _, err = child.communicate(timeout=120)
    print(err[-2500:])
    assert child.returncode == code
    certs = list(tmp_path.glob("record-*.json"))
    assert len(certs) <= 1  # whole or absent
    if certs:
        doc = json.loads(certs[0].read_text())
        assert doc["results"]["ended"] == ended and _graphs(doc["results"])
