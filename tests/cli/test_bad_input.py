"""Issue 14's bad inputs: each one line naming the problem, exit 2, no traceback, nothing
half-written. Certificates are synthetic (tests/_certfactory.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _certfactory import certificate
from click.testing import CliRunner, Result

from graphcert.cert.document import write_certificate
from graphcert.cli import cli
from graphcert.errors import InputError
from graphcert.fileio import atomic_write_text
from graphcert.gate import find_json_files
from graphcert.render.sanitize import clean
from graphcert.workloads import registry

ROOT = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("synthetic_cli")


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


def one_line(result: Result) -> str:
    """The single error line of a run that must exit 2 without a traceback."""
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture()
def reports(tmp_path: Path) -> Path:
    write_certificate(tmp_path / "reports" / "t.json", certificate("topology"))
    return tmp_path / "reports"


# 1 ------------------------------------------------------------------------- output paths

@pytest.mark.parametrize("option", ["--junit", "--summary"])
def test_output_under_a_file_is_checked_before_the_gate(reports: Path, option: str) -> None:
    Path("README.md").write_text("a file\n")
    result = run("gate", "reports", option, "README.md/j.xml")
    line = one_line(result)
    assert f"{option} README.md/j.xml cannot be written: README.md is a file" in line
    assert result.stdout == ""  # no PASS printed before the error


@pytest.mark.parametrize("option", ["--junit", "--summary"])
def test_output_that_is_a_folder_is_one_line(reports: Path, option: str) -> None:
    result = run("gate", "reports", option, "reports")
    assert f"{option} reports is a folder" in one_line(result)


def test_step_summary_in_a_missing_folder_is_created(reports: Path) -> None:
    result = run("gate", "reports", env={"GITHUB_STEP_SUMMARY": "ci/deeper/summary.md"})
    assert result.exit_code == 0, result.output
    assert "graphcert gate" in Path("ci/deeper/summary.md").read_text()


def test_step_summary_that_is_a_folder(reports: Path) -> None:
    result = run("gate", "reports", env={"GITHUB_STEP_SUMMARY": "reports"})
    assert "$GITHUB_STEP_SUMMARY reports is a folder" in one_line(result)
    assert result.stdout == ""


# 2 --------------------------------------------------------------------- NaN in a policy

@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "+nan"])
def test_policy_rejects_nan_and_infinity(reports: Path, value: str) -> None:
    Path("gate.toml").write_text(f"max_regression = {value}\n")
    line = one_line(run("gate", "reports", "--policy", "gate.toml"))
    assert "max_regression must be a finite non-negative number" in line


# 3 ------------------------------------------------------------------------ symlink loops

def test_symlink_loop_in_certificate_and_baseline_folders(reports: Path) -> None:
    os.symlink("x.json", reports / "x.json")
    Path("base").mkdir()
    os.symlink("y.json", Path("base") / "y.json")
    os.symlink(".", Path("base") / "again")  # a folder loop is not followed
    write_certificate(Path("base") / "t.json", certificate("topology"))
    result = run("gate", "reports", "--baseline", "base")
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and "Traceback" not in result.output
    assert any("reports/x.json: a broken symlink or a symlink loop" in ln for ln in lines)
    assert any("base/y.json: a broken symlink or a symlink loop" in ln for ln in lines)
    files, problems = find_json_files([Path("base")])
    assert [f.name for f in files] == ["t.json"] and len(problems) == 1


# 4 ------------------------------------------------------- deep nesting and huge integers

DEEP = "[" * 200_000
HUGE = '{"schema_version": ' + "9" * 5000 + "}"


@pytest.mark.parametrize("text", [DEEP, HUGE], ids=["deep", "huge-int"])
@pytest.mark.parametrize("command", ["gate", "show", "diff"])
def test_deep_or_huge_json_is_one_line(text: str, command: str) -> None:
    Path("reports").mkdir()
    Path("reports/bad.json").write_text(text)
    args = {"gate": ["gate", "reports"], "show": ["show", "reports/bad.json"],
            "diff": ["diff", "reports/bad.json", "reports/bad.json"]}[command]
    line = one_line(run(*args))
    assert "reports/bad.json" in line
    assert "nested too deeply" in line or "integer literal has 5000 digits" in line


@pytest.mark.parametrize("text", ["x = " + "[" * 200_000, "max_nodes = " + "9" * 5000],
                         ids=["deep", "huge-int"])
def test_deep_or_huge_policy_is_one_line(reports: Path, text: str) -> None:
    Path("gate.toml").write_text(text)
    assert "gate.toml" in one_line(run("gate", "reports", "--policy", "gate.toml"))


# 5 ------------------------------------------------------------------- malformed policies

@pytest.mark.parametrize("text,expected", [
    ("[tool]\ngraphcert = 5\n", "[tool.graphcert] must be a table"),
    ("[tool.graphcert]\ngate = 1\n", "[tool.graphcert.gate] must be a table"),
    ("tool = 3\n", "[tool] must be a table"),
])
def test_policy_with_a_scalar_where_a_table_belongs(reports: Path, text: str,
                                                    expected: str) -> None:
    Path("gate.toml").write_text(text)
    assert expected in one_line(run("gate", "reports", "--policy", "gate.toml"))


def test_policy_in_pyproject_with_a_scalar_table(reports: Path) -> None:
    Path("pyproject.toml").write_text("[tool]\ngraphcert = 5\n")
    assert "[tool.graphcert] must be a table" in one_line(run("gate", "reports"))


def test_policy_that_is_not_utf8(reports: Path) -> None:
    Path("gate.toml").write_bytes(b"max_regression = 0.1 # \xff\xfe\n")
    line = one_line(run("gate", "reports", "--policy", "gate.toml"))
    assert "gate.toml is not UTF-8 text" in line


# 9 ------------------------------------------------------------- references and options

def test_int_option_given_a_float_is_an_error_not_a_truncation() -> None:
    with pytest.raises(InputError, match=r"option kernels=1.5 must be an int"):
        registry.load("chain[kernels=1.5]")
    assert registry.load("chain[kernels=3]").native().workload.kernels == 3  # type: ignore[attr-defined]


def test_duplicate_option_key_is_an_error() -> None:
    with pytest.raises(InputError, match="'kernels' is given twice"):
        registry.parse_ref("chain[kernels=2,kernels=3]")


def test_workload_file_calling_sys_exit_at_import(tmp_path: Path) -> None:
    Path("w.py").write_text("import sys\nsys.exit(7)\n")
    with pytest.raises(InputError, match=r"importing workload file w.py raised SystemExit: 7"):
        registry.load("w.py:W")
    line = one_line(run("verify", "w.py:W"))
    assert "SystemExit: 7" in line


@pytest.mark.parametrize("args", [["bench", "chain", "--size", ""],
                                  ["bench", "chain", "--classes", ""],
                                  ["capture", "chain", "--size", ""],
                                  ["verify", "chain", "--classes", ""]])
def test_empty_size_or_classes_is_an_error(args: list[str]) -> None:
    line = one_line(run(*args))
    assert "''" in line  # names the empty value


def test_huge_option_literal_is_not_converted() -> None:
    ref = registry.parse_ref("chain[kernels=" + "9" * 5000 + "]")
    assert isinstance(ref.options[0][1], str)  # left as text; the type check rejects it
    with pytest.raises(InputError, match="must be an int"):
        registry.load(ref.text)


# 10 ------------------------------------------------------------------ interrupted writes

_WRITER = textwrap.dedent("""
    import os, sys, time
    from graphcert import fileio
    real_fsync = os.fsync
    def slow_fsync(fd):
        print("ready", flush=True)
        time.sleep(30)
    os.fsync = slow_fsync
    fileio.atomic_write_text(sys.argv[1], "x" * 1000)
""")


def _interrupted_write(target: Path, sig: int) -> int:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    proc.send_signal(sig)
    return proc.wait(timeout=30)


def test_sigterm_during_a_write_removes_the_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "out" / "c.json"
    assert _interrupted_write(target, signal.SIGTERM) == -signal.SIGTERM
    assert list(target.parent.iterdir()) == []


def test_sigkill_leftovers_are_invisible_and_removed_by_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "out" / "c.json"
    assert _interrupted_write(target, signal.SIGKILL) == -signal.SIGKILL
    leftovers = list(target.parent.iterdir())
    assert len(leftovers) == 1 and leftovers[0].name.startswith(".c.json.")
    files, problems = find_json_files([target.parent])
    assert files == [] and problems == []
    atomic_write_text(target, "{}")
    assert [p.name for p in target.parent.iterdir()] == ["c.json"]


# 11 ----------------------------------------------------------------- control characters

EVIL = "scan\x1b[2J\x1b]0;pwned\x07\u202e\x9b31m\rX"


def test_clean_strips_escapes_controls_and_bidi() -> None:
    assert clean(EVIL) == "scan X"
    assert clean("plain text, ünïcode 名前") == "plain text, ünïcode 名前"


def test_gate_and_show_never_print_control_characters(tmp_path: Path) -> None:
    cert = certificate("topology", reasons=[f"reason {EVIL}"])
    cert["environment"]["gpu"]["name"] = f"GPU{EVIL}"
    from graphcert.cert.document import compute_digest
    cert["digest"] = compute_digest(cert)
    write_certificate(Path("reports/t.json"), cert)
    for args in (["gate", "reports"], ["show", "reports/t.json"],
                 ["diff", "reports/t.json", "reports/t.json"],
                 ["gate", "reports", "--junit", "j.xml", "--summary", "s.md"]):
        result = run(*args)
        assert result.exit_code == 0, result.output
        out = result.output + "".join(Path(f).read_text() for f in ("j.xml", "s.md")
                                      if Path(f).exists())
        assert not any(ch in out for ch in "\x1b\x07\x9b\u202e\r"), (args, out)
    assert "GPUscan X" in run("gate", "reports").stdout
    assert json.loads(run("show", "reports/t.json", "--json").stdout)  # JSON escapes them
