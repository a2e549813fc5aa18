"""`graphcert inventory` through click's runner, on a synthetic snapshot (no GPU needed).

The snapshot is the synthetic example pinned in tests/golden/example_snapshot.json (kernel
names k_*), written by tests/render/test_inventory_render.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from graphcert.cli import cli
from graphcert.model import load_snapshot, snapshot_to_json
from graphcert.workloads import registry

EXAMPLE = Path(__file__).resolve().parents[1] / "golden" / "example_snapshot.json"


@pytest.fixture
def snap(tmp_path: Path) -> Path:
    path = tmp_path / "example.snapshot.json"
    shutil.copy(EXAMPLE, path)
    return path


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, ["inventory", *args], env={"COLUMNS": "120", **(env or {})})


@pytest.fixture
def one_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver shows one synthetic GPU: what inventory checks before a workload's size
    and reference (graphcert.run.fleet.list_gpus), on any machine."""
    from graphcert.cert.results.fleet import Gpu
    from graphcert.run import fleet

    monkeypatch.setattr(fleet, "list_gpus", lambda: [Gpu(0, "SYNTHETIC GPU", "GPU-synthetic")])


def test_table(snap: Path) -> None:
    result = run(str(snap))
    assert result.exit_code == 0, result.output
    s = load_snapshot(snap)
    for text in ("k_a", "k_child_b", "memcpy DtoH", "memset value=0", "8[0].0",
                 s.topology_hash[:12], s.shape_hash[:12], "12 nodes (+3 nested)"):
        assert text in result.stdout
    assert result.stderr == ""


def test_tree(snap: Path) -> None:
    result = run(str(snap), "--tree")
    assert result.exit_code == 0, result.output
    assert "graph (topology" in result.stdout and "body 0: 1 node" in result.stdout


def test_json_is_the_snapshot_document(snap: Path) -> None:
    result = run(str(snap), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc == snapshot_to_json(load_snapshot(snap))
    assert doc["counts"]["kernel"] == 3 and len(doc["topology_hash"]) == 64


def one_line_error(result: Result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("graphcert: error: ")
    assert "Traceback" not in result.output
    return lines[0]


def test_corrupt_file_is_one_line_exit_2(snap: Path) -> None:
    doc = json.loads(snap.read_text())
    doc["nodes"][2]["attrs"]["grid"] = [99, 1, 1]
    snap.write_text(json.dumps(doc))
    line = one_line_error(run(str(snap)))
    assert str(snap) in line and "corrupt or edited: shape_hash does not match" in line


@pytest.mark.parametrize("content,message", [
    ("not json at all", "not JSON"),
    ('{"schema_version": 1, "kind": "bench", "tool": {"name": "graphcert"}}',
     "is a graphcert certificate ('bench'), not a snapshot"),
])
def test_bad_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert message in one_line_error(run(str(path)))


def test_missing_file(tmp_path: Path) -> None:
    line = one_line_error(run(str(tmp_path / "nope.json")))
    assert "nope.json: no such file" in line


def test_size_is_for_workloads_only(snap: Path) -> None:
    assert "--size applies to a workload" in one_line_error(run(str(snap), "--size", "8"))


def test_workload_needs_a_size(one_gpu: None) -> None:
    assert "add --size N" in one_line_error(run("synthetic_workload"))


@pytest.mark.parametrize("args", [("scan",), ("chian", "--size", "4"), ("scan", "--size", "8"),
                                  ("scan", "--device", "1")])
def test_without_a_gpu_a_workload_target_says_so_first(no_driver: None,
                                                        args: tuple[str, ...]) -> None:
    """Nothing about a workload target can work without a GPU: that is the one line (exit 3),
    not "add --size N" or an unknown reference first and the missing GPU after the fix."""
    result = run(*args)
    assert result.exit_code == 3, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"graphcert: error: {args[0]!r} is not a snapshot file (*.json), so "
                           "it names a workload to capture on a GPU: no NVIDIA driver found")
    assert "inventory of a saved snapshot do not" in line and "--size" not in line


def test_a_driver_without_gpus_is_no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphcert.run import fleet

    monkeypatch.setattr(fleet, "list_gpus", lambda: [])
    result = run("scan", "--size", "8")
    assert result.exit_code == 3 and "the driver shows none" in result.stderr, result.output


def test_workload_is_captured_through_graphcert_capture(monkeypatch: pytest.MonkeyPatch,
                                                        one_gpu: None) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(registry, "load", lambda ref: object())  # a known reference
    fake = types.ModuleType("graphcert.run.capture")

    def capture_snapshot(ref: str, **kw: Any) -> Any:
        calls.append((ref, kw))
        return load_snapshot(EXAMPLE)

    fake.capture_snapshot = capture_snapshot  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "graphcert.run.capture", fake)
    import graphcert.run  # `import graphcert.run.capture as x` reads the package attribute first

    monkeypatch.setattr(graphcert.run, "capture", fake, raising=False)
    result = run("synthetic_workload", "--size", "1000", "--json",
                 env={"GRAPHCERT_DEVICE": "3"})
    assert result.exit_code == 0, result.output
    assert calls == [("synthetic_workload", {"size": 1000, "mode": "global", "device": 3})]
    assert json.loads(result.stdout)["meta"]["workload"] == "synthetic-example"
    result = run("synthetic_workload", "--size", "4", "--device", "1")
    assert result.exit_code == 0, result.output
    assert calls[-1][1]["device"] == 1


def test_device_variable_one_rule(monkeypatch: pytest.MonkeyPatch, one_gpu: None) -> None:
    """GRAPHCERT_DEVICE=abc: ignored where no device is needed, an error naming it (exit 2)
    where one is, and the workload reference is checked before it."""
    result = run(str(EXAMPLE), env={"GRAPHCERT_DEVICE": "abc"})
    assert result.exit_code == 0, result.output
    line = one_line_error(run("chian", "--size", "4", env={"GRAPHCERT_DEVICE": "abc"}))
    assert "unknown workload 'chian'" in line and "did you mean chain" in line
    monkeypatch.setattr(registry, "load", lambda ref: object())
    line = one_line_error(run("chain", "--size", "4", env={"GRAPHCERT_DEVICE": "abc"}))
    assert "$GRAPHCERT_DEVICE='abc' is not a device index" in line


@pytest.mark.parametrize("command", ["capture", "verify", "bench"])
def test_device_variable_is_an_error_for_gpu_commands(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "chain"], env={"GRAPHCERT_DEVICE": "abc"})
    assert result.exit_code == 2, result.output
    assert "$GRAPHCERT_DEVICE='abc' is not a device index" in result.output
    assert "Traceback" not in result.output


def test_unknown_workload_is_checked_before_capture(monkeypatch: pytest.MonkeyPatch,
                                                   one_gpu: None) -> None:
    def no_gpu_work(*a: Any, **k: Any) -> Any:
        raise AssertionError("GPU work started before the reference was checked")

    fake = types.ModuleType("graphcert.run.capture")
    fake.capture_snapshot = no_gpu_work  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "graphcert.run.capture", fake)
    line = one_line_error(run("chian", "--size", "4"))
    assert "unknown workload 'chian'" in line


def test_snapshot_mode_imports_no_cuda(snap: Path) -> None:
    """inventory FILE must work where CUDA is absent: it never imports it."""
    code = ("import sys; from click.testing import CliRunner; from graphcert.cli import cli; "
            "r = CliRunner().invoke(cli, ['inventory', sys.argv[1]]); "
            "assert r.exit_code == 0, r.output; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('cuda', 'numpy') "
            "or m.startswith('graphcert.cuda') or m == 'graphcert.run.capture']; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code, str(snap)], check=True)
