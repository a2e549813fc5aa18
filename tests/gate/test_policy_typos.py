"""A policy the gate would misread is refused (exit 2, one line): a per-workload table entry
naming a workload no gated certificate has, and a key beside [tool.graphcert.gate] that the
gate would ignore. Certificates are synthetic (tests/_certfactory.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _certfactory import certificate
from click.testing import CliRunner, Result

from graphcert.cert.document import write_certificate
from graphcert.cli import cli

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.usefixtures("synthetic_cli")


@pytest.fixture()
def reports() -> Path:
    """A scan and a chain certificate of each kind under ./reports."""
    for ref in ("scan", "chain"):
        for kind in ("topology", "bench"):
            write_certificate(Path("reports") / f"{kind}-{ref}.json",
                              certificate(kind, ref=ref))
    return Path("reports")


def gate(*args: str) -> Result:
    return CliRunner().invoke(cli, ["gate", "reports", *args])


def one_line(result: Result) -> str:
    """The single error line of a run that must exit 2 without a traceback or a verdict."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.stdout == ""
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize(("entry", "named", "guess"), [
    ("min_speedup = { chian = 100.0 }", "min_speedup names workload 'chian'", "'chain'"),
    ("max_nodes = { sacn = 0 }", "max_nodes names workload 'sacn'", "'scan'"),
])
def test_table_entry_naming_no_certificate_is_refused_with_the_closest_name(
        reports: Path, entry: str, named: str, guess: str) -> None:
    Path("gate.toml").write_text(f"[tool.graphcert.gate]\n{entry}\n")
    line = one_line(gate("--policy", "gate.toml"))
    assert named in line and "which no certificate in this gate run has" in line
    assert f"did you mean {guess}?" in line


def test_every_misnamed_entry_is_named_on_the_one_line(reports: Path) -> None:
    Path("pyproject.toml").write_text(
        "[tool.graphcert.gate]\nmin_speedup = { chian = 1.0 }\n"
        "max_nodes = { sacn = 9, nothing_alike = 9 }\n")
    line = one_line(gate())
    assert "policy pyproject.toml [tool.graphcert.gate]:" in line
    assert "'chian'" in line and "'sacn'" in line and "'nothing_alike'" in line
    assert "'nothing_alike', which no certificate in this gate run has (name" in line


def test_report_refuses_the_same_typo(reports: Path) -> None:
    Path("gate.toml").write_text("min_speedup = { chian = 1.0 }\n")
    result = CliRunner().invoke(cli, ["report", "reports", "--policy", "gate.toml",
                                      "-o", "r.html"])
    assert "did you mean 'chain'?" in one_line(result)
    assert not Path("r.html").exists()


def test_star_and_real_names_pass_and_apply(reports: Path) -> None:
    Path("gate.toml").write_text('min_speedup = { chain = 1.0, "*" = 1.0 }\n'
                                 'max_nodes = { scan = 2, "*" = 100 }\n')
    result = gate("--policy", "gate.toml")
    assert result.exit_code == 1, result.output  # the synthetic scan has 4 nodes > 2
    assert "FAIL scan topology on TEST-GPU [max_nodes]" in result.stdout


def test_a_required_workload_without_certificates_still_fails_not_refused(
        reports: Path) -> None:
    Path("gate.toml").write_text('require = { join = ["bench"] }\n'
                                 "max_nodes = { join = 5 }\n")
    result = gate("--policy", "gate.toml")
    assert result.exit_code == 1, result.output
    assert "FAIL policy [require]: 1 required certificate(s) missing" in result.stdout
    assert "join: no bench certificate" in result.stdout


@pytest.mark.parametrize(("text", "key"), [
    ("max_nodes = 0\n[tool.graphcert.gate]\nmax_regression = 0.1\n", "'max_nodes'"),
    ("min_speedp = 9\n[tool.graphcert.gate]\n", "'min_speedp'"),
    ("[tool.graphcert]\nmin_speedup = 9\n[tool.graphcert.gate]\n",
     "'tool.graphcert.min_speedup'"),
])
@pytest.mark.parametrize("where", ["gate.toml", "pyproject.toml"])
def test_key_beside_the_gate_table_is_refused(reports: Path, text: str, key: str,
                                              where: str) -> None:
    Path(where).write_text(text)
    args = ("--policy", where) if where == "gate.toml" else ()
    line = one_line(gate(*args))
    assert f"policy {where}: key {key} is outside [tool.graphcert.gate]" in line
    assert "move it under [tool.graphcert.gate]" in line


def test_pyproject_tables_beside_the_gate_table_are_fine(reports: Path) -> None:
    Path("pyproject.toml").write_text(
        '[build-system]\nrequires = ["x"]\n[project]\nname = "x"\n'
        '[dependency-groups]\ndev = []\n[tool.ruff]\nline-length = 100\n'
        "[tool.graphcert.gate]\nmax_nodes = { chain = 100 }\n")
    result = gate()
    assert result.exit_code == 0, result.output
    result = gate("--policy", "pyproject.toml")
    assert result.exit_code == 0, result.output


def test_this_repositorys_policy_still_loads_and_names_real_workloads() -> None:
    from graphcert.gate.policy import check_workload_names, load_policy

    policy = load_policy(cwd=ROOT)
    assert policy.min_speedup == {"chain": 2.0, "chain[kernels=1]": 1.5}
    docs = [json.loads(p.read_text()) for p in (ROOT / "reports").glob("*.json")]
    names = {d["workload"]["name"] for d in docs} | {d["workload"]["ref"] for d in docs}
    check_workload_names(policy, names)  # raises on a name no certificate has
