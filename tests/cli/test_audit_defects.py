"""The reliability audit's defects: each bad input is one line (or a quiet exit for a
closed pipe), never a traceback: policy numbers too large for a float, escaped lone
surrogates in a snapshot, stdout that cannot take the output, `"signature": null`, path
objects whose __fspath__ misbehaves, a key id with a trailing newline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _certfactory import certificate
from click.testing import CliRunner, Result

import graphcert
from graphcert.cert.document import write_certificate
from graphcert.cert.signing import SigningKey, sign, signature_problem
from graphcert.cli import cli
from graphcert.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "tests" / "fixtures" / "snapshots" / "chain-c256.snapshot.json"
NUMERIC_KEYS = ("min_speedup", "max_nodes", "max_plan_regret", "min_graph_coverage",
                "max_instantiations_per_topology", "max_steady_eager_launches",
                "max_node_regression", "max_critical_path_regression", "max_regression",
                "min_noise")
PER_WORKLOAD = NUMERIC_KEYS[:8]
HUGE = "1" + "0" * 400


def one_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, lines
    return lines[0]


@pytest.fixture()
def reports(synthetic_cli: Path) -> Path:
    write_certificate(synthetic_cli / "reports" / "t.json", certificate("topology"))
    return synthetic_cli / "reports"


@pytest.mark.parametrize("command", ["gate", "report"])
@pytest.mark.parametrize("table", [False, True])
@pytest.mark.parametrize("key", NUMERIC_KEYS)
def test_a_policy_number_too_large_for_a_float_is_one_line(
        reports: Path, key: str, table: bool, command: str) -> None:
    if table and key not in PER_WORKLOAD:
        pytest.skip("only per-workload keys take a table")
    Path("p.toml").write_text(f"{key} = {{ '*' = {HUGE} }}\n" if table else f"{key} = {HUGE}\n")
    out = ["-o", "r.html"] if command == "report" else []
    line = one_line(CliRunner().invoke(cli, [command, str(reports), "--policy", "p.toml", *out]))
    assert f"{key} must be a finite non-negative" in line


def _snapshot_with(tmp_path: Path, where: str) -> Path:
    """The chain snapshot with an escaped lone surrogate in its meta or a kernel name."""
    text = SNAPSHOT.read_text(encoding="utf-8")
    if where == "meta":
        doc = json.loads(text)
        doc["meta"]["name"] = "a\ud800b"
        text = json.dumps(doc)  # ensure_ascii: written as the escape \ud800
    else:
        text = text.replace('"chain"', '"chain\\ud800"', 1)
    path = tmp_path / f"{where}.json"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("where", ["meta", "name"])
def test_an_escaped_lone_surrogate_in_a_snapshot_is_refused_everywhere(
        synthetic_cli: Path, where: str) -> None:
    bad = _snapshot_with(synthetic_cli, where)
    runs = [["inventory", str(bad)], ["inventory", str(bad), "--tree"],
            ["inventory", str(bad), "--json"],
            ["diff", str(SNAPSHOT), str(bad)], ["diff", str(bad), str(SNAPSHOT)]]
    for args in runs:
        line = one_line(CliRunner().invoke(cli, args))
        assert "lone surrogate" in line and "\\ud800" in line, (args, line)
    for call in (lambda: graphcert.load(bad), lambda: graphcert.diff(SNAPSHOT, bad)):
        with pytest.raises(InputError, match="lone surrogate"):
            call()


def test_a_lone_surrogate_in_a_certificate_is_refused(synthetic_cli: Path) -> None:
    cert = certificate("topology")
    path = synthetic_cli / "c.json"
    path.write_text(json.dumps(cert).replace('"scan"', '"scan\\udc00"', 1))
    for args in (["show", str(path)], ["gate", str(path)],
                 ["report", str(path), "-o", "r.html"]):
        assert "lone surrogate" in one_line(CliRunner().invoke(cli, args)), args


def _graphcert(*args: str, env: dict[str, str] | None = None, stdout: int | None = None
               ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphcert", *args], cwd=ROOT, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                          stdout=stdout if stdout is not None else subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_stdout_on_a_full_disk_is_one_line() -> None:
    with open("/dev/full", "w") as full:
        done = _graphcert("inventory", str(SNAPSHOT), stdout=full.fileno())
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        "graphcert: error: cannot write the output to stdout: No space left on device"]


def test_stdout_that_cannot_encode_the_output_is_one_line() -> None:
    done = _graphcert("inventory", str(SNAPSHOT), env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "encoding (ascii) cannot write" in lines[0], lines


def test_a_closed_pipe_is_a_quiet_exit_141() -> None:
    # the reader closes at once: every write of the view then meets a closed pipe
    proc = subprocess.Popen([sys.executable, "-m", "graphcert", "inventory", str(SNAPSHOT)],
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == "", err


def test_a_null_signature_is_refused_whichever_is_read_first(synthetic_cli: Path) -> None:
    cert = certificate("topology")
    Path("a.json").write_text(json.dumps(cert))
    Path("n.json").write_text(json.dumps({**cert, "signature": None}))
    for order in (("a.json", "n.json"), ("n.json", "a.json")):
        assert one_line(CliRunner().invoke(cli, ["diff", *order]))
        assert one_line(CliRunner().invoke(cli, ["show", "n.json"]))
    assert CliRunner().invoke(cli, ["show", "a.json"]).exit_code == 0


class _Raises:
    def __fspath__(self) -> str:
        raise RuntimeError("no path today")


class _Returns:
    def __init__(self, value: object) -> None:
        self.value = value

    def __fspath__(self) -> object:
        return self.value


@pytest.mark.parametrize("path", [_Raises(), _Returns(3), _Returns(None), _Returns(b"x")],
                         ids=["raises", "int", "None", "bytes"])
def test_a_misbehaving_fspath_is_an_input_error(tmp_path: Path, path: object) -> None:
    snap = graphcert.load(SNAPSHOT)
    calls = (lambda: graphcert.load(path), lambda: graphcert.save(snap, path),
             lambda: graphcert.diff(path, snap), lambda: graphcert.diff(snap, path),
             lambda: graphcert.record(path))
    for call in calls:
        with pytest.raises(InputError, match="__fspath__"):
            call()  # type: ignore[no-untyped-call]


def test_a_key_id_with_a_trailing_newline_is_shown_escaped() -> None:
    key = SigningKey(b"k" * 32, "test")
    signed = sign(certificate("topology"), key)
    signed["signature"]["key_id"] = key.key_id + "\n"
    problem = signature_problem(signed, key, required=True)
    assert problem is not None and repr(key.key_id + "\n") in problem, problem
    assert signature_problem(signed, None, required=True).count("\\n") == 1  # type: ignore


def test_the_schema_refuses_a_fixed_length_field_with_a_trailing_newline() -> None:
    """A schema pattern's `$` matches before a final newline in Python's re (jsonschema's and
    the compiled check's), so each fixed-length field also carries its maxLength."""
    from graphcert.cert.document import compute_digest
    from graphcert.cert.schemas import validate

    key = SigningKey(b"k" * 32, "test")
    signed = sign(certificate("topology"), key)
    assert validate(signed, "topology") == []
    signed["signature"]["key_id"] = key.key_id + "\n"
    assert any("key_id" in line for line in validate(signed, "topology"))
    bad = certificate("topology")
    bad["workload"]["source_digest"] += "\n"
    bad["digest"] = compute_digest(bad)
    assert any("source_digest" in line for line in validate(bad, "topology"))


def test_errors_that_are_not_stdouts_are_left_alone(capsys: pytest.CaptureFixture[str]) -> None:
    from graphcert.cli import stdout_failed

    with capsys.disabled():  # the real stdout: a pipe or terminal whose reader is there
        assert stdout_failed(BrokenPipeError(32, "a worker's pipe")) is None
    assert stdout_failed(OSError(28, "No space left on device", "out.json")) is None
    assert stdout_failed(OSError(2, "No such file or directory")) is None
    assert stdout_failed(UnicodeEncodeError("koi8_r", "\u2603", 0, 1, "no snowman")) is None
