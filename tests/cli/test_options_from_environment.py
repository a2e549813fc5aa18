"""The environment is read once, at the edge, into graphcert.options.Options and passed
down: --signing-key-file no longer travels through os.environ, run/ takes the git commit
and the key from the options, and nothing in graphcert/ writes os.environ."""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

import pytest
from _certfactory import topology_results
from click.testing import CliRunner

from graphcert.cert.signing import KEY_ENV, KEY_FILE_ENV, load_key
from graphcert.cli import cli
from graphcert.errors import InputError
from graphcert.kinds.topology.result import VerifyResult
from graphcert.options import GitCommit, Options
from graphcert.run import jobs

ROOT = Path(__file__).resolve().parents[2]
KEY = "synthetic-test-key-0123456789abcdef"
OTHER = "another-synthetic-key-fedcba9876543210"


def test_every_setting_comes_from_the_mapping_given(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(KEY)
    options = Options.from_environ({
        "GRAPHCERT_DEVICE": " 0,2 ", "GRAPHCERT_GIT_COMMIT": "0123abcd",
        "GRAPHCERT_GIT_DIRTY": "1", "CI": "true", "TERM": "dumb", "NO_COLOR": "",
        "COLUMNS": "90", KEY_ENV: OTHER, KEY_FILE_ENV: str(key_file),
        "GRAPHCERT_CERT_NAME": "uuid"})
    assert options.device == "0,2" and options.git == GitCommit("0123abcd", dirty=True)
    assert options.ci and options.dumb_terminal and options.no_color and options.uuid_names
    assert options.columns == "90"
    # the key file wins over $GRAPHCERT_SIGNING_KEY, and the options say so once
    assert options.signing_key == load_key(key_file, environ={})
    assert options.warnings == (f"both ${KEY_FILE_ENV} ({key_file}) and ${KEY_ENV} are set: "
                                f"the key file is used, ${KEY_ENV} is ignored",)
    assert Options.from_environ({}) == Options()  # nothing set: nothing read


def test_a_bad_key_stops_only_what_signs() -> None:
    environ = {KEY_ENV: "short"}
    assert Options.from_environ(environ, signing=False).signing_key is None
    with pytest.raises(InputError, match="shorter than 16 bytes"):
        Options.from_environ(environ)


def test_signing_key_file_reaches_the_writer_without_touching_os_environ(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text(KEY)
    monkeypatch.delenv(KEY_FILE_ENV, raising=False)
    monkeypatch.delenv(KEY_ENV, raising=False)
    seen: list[Options] = []
    result = VerifyResult.from_json(topology_results((256,)))

    def fake(refs: Any, capacities: Any, *, options: Options, **_: Any) -> list[Any]:
        seen.append(options)
        return [jobs.Certified("scan", result)]

    monkeypatch.setattr(jobs, "verify_workloads", fake)
    out = CliRunner().invoke(cli, ["verify", "scan", "--classes", "256", "--no-certificate",
                                   "--signing-key-file", str(key_file)])
    assert out.exit_code == 0, out.output
    [options] = seen
    assert options.signing_key == load_key(key_file, environ={})
    assert KEY_FILE_ENV not in os.environ  # the option was not turned into a variable


def test_run_layer_takes_the_git_commit_from_the_options(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    import graphcert.cuda.device as device
    from graphcert.run.environment import environment

    monkeypatch.setattr(device, "environment", lambda index: {"gpu": {"name": "TEST-GPU"}})
    monkeypatch.setenv("GRAPHCERT_GIT_COMMIT", "from-the-variable")
    env = environment(0, GitCommit("from-the-options", dirty=True))
    assert env["git"] == {"commit": "from-the-options", "dirty": True}
    assert environment(0, None)["git"].get("commit") != "from-the-variable"


def _environ_writes(tree: ast.AST) -> list[int]:
    """Lines that assign, delete or update an item of os.environ (or call os.putenv)."""
    def is_environ(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "environ"
                and isinstance(node.value, ast.Name) and node.value.id == "os")

    lines = []
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = list(node.targets) if isinstance(node, (ast.Assign, ast.Delete)) \
                else [node.target]
        if any(isinstance(t, ast.Subscript) and is_environ(t.value) for t in targets):
            lines.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                (is_environ(node.func.value) and node.func.attr in
                 ("update", "setdefault", "pop", "popitem", "clear"))
                or (isinstance(node.func.value, ast.Name) and node.func.value.id == "os"
                    and node.func.attr in ("putenv", "unsetenv"))):
            lines.append(node.lineno)
    return lines


def _function_lines(path: Path, name: str) -> range:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    (fn,) = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name]
    return range(fn.lineno, (fn.end_lineno or fn.lineno) + 1)


def test_no_module_writes_os_environ() -> None:
    """One exception, and only inside it: graphcert.cupti.record.route_nvtx points the
    recorded program's NVTX at libcupti (NVTX reads NVTX_INJECTION64_PATH with getenv, in
    C, at the program's first range) and takes it back when the recording ends."""
    found = {str(path.relative_to(ROOT)): lines
             for path in sorted((ROOT / "graphcert").rglob("*.py"))
             if (lines := _environ_writes(ast.parse(path.read_text(encoding="utf-8"))))}
    routed = found.pop("graphcert/cupti/record.py", [])
    inside = _function_lines(ROOT / "graphcert" / "cupti" / "record.py", "route_nvtx")
    assert len(routed) == 2 and all(line in inside for line in routed), routed
    assert found == {}
    assert _environ_writes(ast.parse("import os\nos.environ['K'] = 'v'\n")) == [2]


def test_nothing_below_the_command_line_reads_the_environment_for_settings() -> None:
    """Issue 29 item 5: the signing key and $GITHUB_STEP_SUMMARY come from Options (read
    once where a run starts); the certificate and gate layers take what they are given."""
    import inspect

    from graphcert.cert import signing
    from graphcert.gate import report

    assert "os.environ" not in inspect.getsource(signing)
    assert "GITHUB_STEP_SUMMARY" not in inspect.getsource(report)
    options = Options.from_environ({"GITHUB_STEP_SUMMARY": "/tmp/summary.md"}, signing=False)
    assert options.step_summary == "/tmp/summary.md"
    with pytest.raises(TypeError):
        signing.load_key(None)  # type: ignore[call-arg]  # the environment must be passed
