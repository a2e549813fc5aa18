"""CLI basics that need no GPU: help, version, env without a driver."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from graphcert.cli import COMMANDS, cli


def test_help_lists_commands() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "env" in result.output and "Profile and certify CUDA Graphs" in result.output


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_available_command_has_help(name: str) -> None:
    import importlib.util

    if importlib.util.find_spec(COMMANDS[name][0]) is None:
        pytest.skip(f"{name} is not in this build")
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


def test_version() -> None:
    from graphcert import __version__

    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_env_without_driver_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulate a machine without the driver library: one line, non-zero, no traceback."""
    from cuda.bindings import driver

    import graphcert.cuda.check as check

    class DynamicLibNotFoundError(Exception):
        pass

    def no_driver(_flags: int) -> None:
        raise DynamicLibNotFoundError('"cuda" is an NVIDIA driver library')

    monkeypatch.setattr(check, "_initialized", False)
    monkeypatch.setattr(driver, "cuInit", no_driver)
    result = CliRunner().invoke(cli, ["env", "--require-gpu"])
    assert result.exit_code == 3
    lines = result.output.strip().splitlines()
    assert lines == ["graphcert: error: no NVIDIA driver found: capture, verify, bench, "
                     "profile, record and plan need a GPU, as does inventory of a workload; "
                     "gate, show, diff, report, env, workloads and inventory of a saved "
                     "snapshot do not"]
    # without --require-gpu env is informational: it says so and exits 0
    monkeypatch.setattr(check, "_initialized", False)
    result = CliRunner().invoke(cli, ["env"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "driver             not found" in result.stdout
    assert "GPUs: none here (no NVIDIA driver found" in result.stdout
    monkeypatch.setattr(check, "_initialized", False)
    result = CliRunner().invoke(cli, ["env", "--json"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["gpus"] == [] and doc["driver_version"] is None
    assert doc["no_driver"].startswith("no NVIDIA driver found")


def _has_driver() -> bool:
    code = "from graphcert.cuda.check import load_driver; load_driver()"
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


@pytest.mark.skipif(_has_driver(), reason="this machine has a CUDA driver and device")
def test_env_subprocess_on_machine_without_driver() -> None:
    proc = subprocess.run([sys.executable, "-m", "graphcert", "env"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert "GPUs: none here (no NVIDIA driver found" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "graphcert", "env", "--require-gpu"],
                          capture_output=True, text=True)
    assert proc.returncode == 3
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "no NVIDIA driver found" in proc.stderr


def test_unknown_command_exits_2() -> None:
    result = CliRunner().invoke(cli, ["nonsense"])
    assert result.exit_code == 2


def test_missing_dependency_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """A declared dependency that is not installed (here rich) names itself, no traceback."""
    monkeypatch.delitem(sys.modules, "graphcert.render.console", raising=False)
    monkeypatch.setitem(sys.modules, "rich.console", None)
    result = CliRunner().invoke(cli, ["gate", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "graphcert: error: the Python package 'rich' is not installed" in result.output
    assert "pip install" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
