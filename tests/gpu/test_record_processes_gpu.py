"""`graphcert record -- COMMAND` over many processes, checked against the ground truth the
examples print: examples/record/serve_torch.py with --engine-process (one spawned engine
core), --workers 2 (tensor-parallel ranks) and --fallback; examples/record/native_server.cu
good, with --fallback, --fork 2 (workers ending with _exit), --fork 2 --kill-self-at (one
worker killed), --orphan (a child that outlives the command) and --selfcheck (intended eager
kernels a policy allows by NVTX range).

Each serving process prints `graphcert-truth {json}` (its pid, graphs instantiated, graph
launches and, for the native example, steady-state eager launches per NVTX range); each test
finds the certificate's process of that pid and holds its figures to the line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVE_TORCH = "examples/record/serve_torch.py"
NATIVE_SOURCE = ROOT / "examples" / "record" / "native_server.cu"
TRUTH = "graphcert-truth "
TORCH_STEPS = "600"
NATIVE_STEPS = "2000"

Doc = dict[str, Any]


@pytest.fixture(autouse=True)
def _driver(gpu_ctx: object) -> None:
    """Skips without a CUDA driver or device (gpu_ctx); every other error fails."""


@pytest.fixture()
def torch_gpus() -> int:
    """The GPUs PyTorch sees; skips when PyTorch is absent or sees none."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return int(torch.cuda.device_count())


def _nvcc() -> str | None:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    for candidate in (shutil.which("nvcc"), home and os.path.join(home, "bin", "nvcc"),
                      "/usr/local/cuda/bin/nvcc"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="module")
def native(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """native_server.cu built once per module with its header's build line."""
    nvcc = _nvcc()
    if nvcc is None:
        pytest.skip("nvcc is not installed (needed to build examples/record/native_server.cu)")
    binary = tmp_path_factory.mktemp("native") / "native_server"
    done = subprocess.run([nvcc, "-O2", "-o", str(binary), str(NATIVE_SOURCE)], text=True,
                          capture_output=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return binary


def _graphcert(*args: str, timeout: float = 300, env: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphcert", *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=timeout, check=False,
                          env=None if env is None else {**os.environ, **env})


def _record(out: Path, *command: str, code: int = 0, env: dict[str, str] | None = None
            ) -> tuple[Doc, list[Doc]]:
    """Records COMMAND into `out`; the certificate's results and the truth lines printed."""
    done = _graphcert("record", "--out", str(out), "--", *command, env=env)
    print(done.stderr[-2500:])  # graphcert's summary, for the log
    assert done.returncode == code, done.stderr[-3000:]
    (cert,) = out.glob("record-*.json")
    truths = [json.loads(line[len(TRUTH):]) for line in done.stdout.splitlines()
              if line.startswith(TRUTH)]
    return json.loads(cert.read_text())["results"], truths


def _process(results: Doc, pid: int) -> Doc:
    procs = results["processes"]
    found = [p for p in procs if p["pid"] == pid]
    assert len(found) == 1, f"pid {pid} among {[(p['pid'], p['argv']) for p in procs]}"
    proc: Doc = found[0]
    return proc


def _launched_nothing(proc: Doc) -> bool:
    overall = proc["coverage"]["overall"]
    return not proc["graphs"] and not overall["graph_kernels"] and not overall["eager_kernels"]


def _regions(proc: Doc) -> dict[str, int]:
    nvtx = proc.get("nvtx") or {"regions": []}
    return {r["region"]: r["count"] for r in nvtx["regions"]}


def _holds_graphs(proc: Doc, truth: Doc) -> None:
    """Graph executables instantiated and graph launches exactly as the process counted."""
    assert len(proc["graphs"]) == truth["graphs"], (proc["graphs"], truth)
    assert sum(g["launches"] for g in proc["graphs"]) == truth["graph_launches"], truth
    assert all(g["made"] == "capture" and g["topology_hash"] for g in proc["graphs"])


def _holds_native(proc: Doc, truth: Doc) -> None:
    """A native process: graphs, steady eager launches and their NVTX ranges exactly."""
    _holds_graphs(proc, truth)
    steady = proc["coverage"]["steady"]
    assert steady is not None and steady["eager_kernels"] == truth["eager_steady"], truth
    assert proc["coverage"]["overall"]["eager_kernels"] == truth["eager_launches"], truth
    expected = {name: n for name, n in truth["eager_by_range"].items() if n}
    assert _regions(proc) == expected, (proc.get("nvtx"), truth)
    assert not proc["problems"], proc["problems"]


def _torch(*flags: str) -> tuple[str, ...]:
    return (sys.executable, SERVE_TORCH, "--steps", TORCH_STEPS, *flags)


# PyTorch


def test_engine_process_records_the_spawned_child(tmp_path: Path, torch_gpus: int) -> None:
    results, truths = _record(tmp_path, *_torch("--engine-process"))
    (truth,) = truths
    child = _process(results, truth["pid"])
    _holds_graphs(child, truth)
    assert truth["graphs"] == 9 and truth["eager_steps"] == 0
    parent = _process(results, child["ppid"])  # the command's own process: listed, idle
    assert _launched_nothing(parent) and parent["exit_code"] == 0
    # anything else listed (multiprocessing's resource tracker) launched nothing either
    assert all(_launched_nothing(p) for p in results["processes"] if p is not child)


def test_two_ranks_make_the_same_topologies_on_their_own_gpus(tmp_path: Path,
                                                              torch_gpus: int) -> None:
    if torch_gpus < 2:
        pytest.skip("needs 2 GPUs (one per tensor-parallel rank)")
    results, truths = _record(tmp_path, *_torch("--workers", "2"))
    assert sorted(t["device"] for t in truths) == [0, 1]
    ranks = [_process(results, t["pid"]) for t in truths]
    for rank, truth in zip(ranks, truths, strict=True):
        _holds_graphs(rank, truth)
    hashes = [sorted(g["topology_hash"] for g in rank["graphs"]) for rank in ranks]
    assert hashes[0] == hashes[1]
    uuids = [next(g["uuid"] for g in rank["gpus"] if g["ordinal"] == truth["device"])
             for rank, truth in zip(ranks, truths, strict=True)]
    assert uuids[0] != uuids[1], uuids
    # the same topologies on two GPUs are not churn: churn is each process's own
    assert all(rank["churn"] == [] for rank in ranks)


def test_engine_process_fallback_names_the_range_in_the_child_only(tmp_path: Path,
                                                                   torch_gpus: int) -> None:
    results, truths = _record(tmp_path, *_torch("--engine-process", "--fallback"))
    (truth,) = truths
    assert truth["eager_range"] == "eager b16" and truth["eager_steps"] > 0
    child = _process(results, truth["pid"])
    _holds_graphs(child, truth)
    eager = child["coverage"]["steady_eager"]
    assert eager, "the left-out bucket's steps ran eager in the child"
    assert _regions(child) == {"eager b16": sum(e["count"] for e in eager)}
    assert all(not _regions(p) for p in results["processes"] if p is not child)


# native


def test_native_good_run_is_counted_exactly(tmp_path: Path, native: Path) -> None:
    results, truths = _record(tmp_path, str(native), "--steps", NATIVE_STEPS)
    (truth,) = truths
    proc = _process(results, truth["pid"])
    _holds_native(proc, truth)
    assert truth["graphs"] == 7 and truth["eager_launches"] == 0
    assert proc["ended"] == "exit" and proc["exit_code"] in (0, None)


def test_native_fallback_names_eager_b16(tmp_path: Path, native: Path) -> None:
    results, truths = _record(tmp_path, str(native), "--steps", NATIVE_STEPS, "--fallback")
    (truth,) = truths
    assert truth["graphs"] == 6 and truth["eager_by_range"]["eager b16"] > 0
    _holds_native(_process(results, truth["pid"]), truth)


def test_native_forked_workers_ending_with_exit_now(tmp_path: Path, native: Path) -> None:
    # one GPU is enough: worker i serves on device i % count (both on 0 with one GPU)
    results, truths = _record(tmp_path, str(native), "--steps", NATIVE_STEPS, "--fork", "2",
                              "--fallback")
    assert len(truths) == 2
    for truth in truths:
        proc = _process(results, truth["pid"])
        _holds_native(proc, truth)
        assert proc["ended"] == "_exit" and proc["exit_code"] == 0, proc["ended"]
    pids = {t["pid"] for t in truths}
    assert all(_launched_nothing(p) for p in results["processes"] if p["pid"] not in pids)


def test_native_worker_killed_mid_run(tmp_path: Path, native: Path) -> None:
    # the collector flushes every millisecond here, so the killed worker's stream holds what
    # it did before the kill (by default, every 200 ms: this run lasts less)
    results, truths = _record(tmp_path, str(native), "--steps", NATIVE_STEPS, "--fork", "2",
                              "--kill-self-at", "1500", code=128 + 9,
                              env={"GRAPHCERT_FLUSH_MS": "1"})
    (truth,) = truths  # worker 0: worker 1 died before printing
    survivor = _process(results, truth["pid"])
    _holds_native(survivor, truth)
    killed = [p for p in results["processes"] if p["ended"] == "killed"]
    assert len(killed) == 1 and killed[0]["pid"] != truth["pid"], killed
    assert killed[0]["ppid"] == survivor["ppid"]  # its sibling
    assert len(killed[0]["graphs"]) == 7  # captured and instantiated long before the kill
    assert 0 < sum(g["launches"] for g in killed[0]["graphs"]) <= 1500
    (cert,) = tmp_path.glob("record-*.json")
    shown = _graphcert("show", str(cert))
    assert shown.returncode == 0, shown.stderr[-2000:]


def test_native_orphan_is_marked(tmp_path: Path, native: Path) -> None:
    results, truths = _record(tmp_path, str(native), "--steps", NATIVE_STEPS, "--orphan", "3")
    (orphan_truth,) = [t for t in truths if t["graphs"] == 1]
    (serving,) = [t for t in truths if t["graphs"] == 7]
    _holds_native(_process(results, serving["pid"]), serving)
    orphan = _process(results, orphan_truth["pid"])
    # the runner either left it running (outlived: what it flushed so far) or waited for it
    assert orphan["ended"] in ("outlived", "exit"), orphan["ended"]
    if orphan["ended"] == "exit":
        _holds_graphs(orphan, orphan_truth)
    else:
        assert sum(g["launches"] for g in orphan["graphs"]) <= orphan_truth["graph_launches"]


SELFCHECK_ALLOWED = """# written by test_record_processes_gpu.py
max_steady_eager_launches = 0
allow_eager_ranges = ["selfcheck"]
"""
SELFCHECK_STRICT = """# written by test_record_processes_gpu.py
max_steady_eager_launches = 0
"""


def test_native_selfcheck_passes_only_where_its_range_is_allowed(tmp_path: Path,
                                                                 native: Path) -> None:
    out = tmp_path / "out"
    results, truths = _record(out, str(native), "--steps", NATIVE_STEPS, "--selfcheck", "100")
    (truth,) = truths
    assert truth["eager_by_range"] == {"eager b16": 0, "selfcheck": 20}
    _holds_native(_process(results, truth["pid"]), truth)
    verdicts = {}
    for name, text in (("allowed", SELFCHECK_ALLOWED), ("strict", SELFCHECK_STRICT)):
        policy = tmp_path / f"{name}.toml"
        policy.write_text(text)
        gate = _graphcert("gate", str(out), "--policy", str(policy), "--json")
        print(name, gate.stdout[-2000:], gate.stderr[-1000:])
        verdicts[name] = gate.returncode
        if name == "strict":
            assert "max_steady_eager_launches" in gate.stdout
    assert verdicts == {"allowed": 0, "strict": 1}
