"""Where a certificate goes and what it says about the host: file names made safe, host
facts, git commit and dirty flag (with and without a checkout or git)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from graphcert.cert.document import certificate_filename, safe_name
from graphcert.run.environment import collect_git_info, host_environment, host_facts


@pytest.mark.parametrize(("args", "name"), [
    (("topology", "scan", "NVIDIA H100 80GB HBM3"), "topology-scan-NVIDIA_H100_80GB_HBM3.json"),
    (("bench", "my/work load", "TEST GPU (x)"), "bench-my_work_load-TEST_GPU_x.json"),
    (("bench", "..", ""), "bench-unknown-unknown.json"),
])
def test_certificate_filename(args: tuple[str, str, str], name: str) -> None:
    assert certificate_filename(*args) == name


def test_git_info_outside_a_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert collect_git_info(tmp_path) == {"commit": None, "dirty": None}


def test_git_info_without_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert collect_git_info(tmp_path) == {"commit": None, "dirty": None}


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_info_in_a_checkout(tmp_path: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    run = lambda *a: subprocess.run(["git", *a], cwd=tmp_path, env=env, check=True,  # noqa: E731
                                    capture_output=True)
    run("init", "-q")
    (tmp_path / "f").write_text("1")
    run("add", "f")
    run("commit", "-q", "-m", "x")
    info = collect_git_info(tmp_path)
    assert len(info["commit"]) == 40 and info["dirty"] is False
    (tmp_path / "f").write_text("2")
    assert collect_git_info(tmp_path)["dirty"] is True


def test_host_facts_are_written_once_and_reused() -> None:
    facts = host_facts()
    assert set(facts) == {"python", "host", "platform"} and all(facts.values())
    env = host_environment()
    assert {k: env[k] for k in facts} == facts and set(env["git"]) == {"commit", "dirty"}


def test_safe_name_is_what_file_names_use() -> None:
    assert safe_name("a b/c") == "a_b_c" and safe_name("..") == "unknown"
