"""`graphcert diff` (issue 34 item 7): bench certificates of two GPU models are compared with
the warning the gate's rule gives (cert.compare.across_models, the one place it is said), and
the exit code says whether the graphs differ, as `cmp` and `git diff --exit-code` do: 0 the
same, 1 different (0 with --exit-zero), 2 bad input. Recorded snapshots and certificates
(reports/, tests/fixtures/: the H200 fleet against the H100 reports), and synthetic ones
(tests/_certfactory.py) where a case needs an edit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _certfactory import certificate, topology_class
from _env import committed_report
from click.testing import CliRunner, Result

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import ACROSS_MODELS, across_models
from graphcert.cert.document import compute_digest, write_certificate
from graphcert.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SNAPS = ROOT / "tests" / "fixtures" / "snapshots"
FLEET = ROOT / "tests" / "fixtures" / "fleet"
H200_CHAIN = FLEET / "bench-chain-NVIDIA_H200-ae0f9605.json"


def _diff(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, ["diff", *map(str, args)], catch_exceptions=False)


def _warnings(result: Result) -> list[str]:
    return [ln.removeprefix("graphcert: warning: ") for ln in result.stderr.splitlines()
            if ln.startswith("graphcert: warning: ")]


# ------------------------------------------------------------------- GPU models (timings)

def test_bench_certificates_of_two_gpu_models_warn_as_the_gate_does() -> None:
    h100 = ROOT / "tests" / "fixtures" / "models" / "bench-chain-NVIDIA_H100_80GB_HBM3.json"
    result = _diff(h100, H200_CHAIN)
    assert result.exit_code == 0, result.output  # timings are compared, never "equal"
    (warning,) = _warnings(result)
    models = across_models(*(Certificate.from_document(json.loads(p.read_text()))
                             for p in (h100, H200_CHAIN)))
    assert models is not None and ACROSS_MODELS in models
    assert warning == f"these bench certificates are {models} (the gate would not compare them)"
    assert "NVIDIA H100 80GB HBM3" in warning and "NVIDIA H200" in warning
    # the timings are still shown, and the JSON carries the warning too
    assert "faster" in result.stdout or "slower" in result.stdout
    doc = json.loads(_diff(h100, H200_CHAIN, "--json").stdout)
    assert doc["warnings"] == [warning] and doc["timings"]


def test_one_gpu_model_has_no_warning() -> None:
    """Two H200s (two UUIDs) of the recorded fleet: one model, nothing to warn of."""
    result = _diff(H200_CHAIN, FLEET / "bench-chain-NVIDIA_H200-ff00340f.json")
    assert result.exit_code == 0 and _warnings(result) == []


def test_topology_across_models_is_no_warning() -> None:
    """Topology must agree across GPUs (the gate compares it): no timing warning there."""
    result = _diff(committed_report("topology", "scan"),
                   FLEET / "topology-scan-NVIDIA_H200-ae0f9605.json")
    assert _warnings(result) == []


def test_the_gate_names_the_same_rule(synthetic_cli: Path) -> None:
    """A bench certificate whose baseline is of another GPU model only: the gate compares
    nothing and says why, in the words diff warns with."""
    write_certificate(Path("cur/bench-scan.json"), certificate("bench", gpu="TEST-GPU"))
    other = certificate("bench", gpu="TEST-GPU-2")
    other["environment"]["gpu"]["uuid"] = "GPU-00000000-test-2"  # another GPU, synthetic
    other["digest"] = compute_digest(other)
    write_certificate(Path("base/bench-scan.json"), other)
    result = CliRunner().invoke(cli, ["gate", "cur", "--baseline", "base", "--json"],
                                catch_exceptions=False)
    (cert,) = json.loads(result.stdout)["certificates"]
    (rule,) = [r for r in cert["rules"] if r["rule"] == "max_regression"]
    assert (rule["status"], rule["summary"]) == ("warn", "no baseline certificate to compare "
                                                         "with")
    assert rule["details"] == ["the baseline's base/bench-scan.json and this certificate are of "
                               f"different GPU models (TEST-GPU-2 and TEST-GPU): {ACROSS_MODELS}"]
    diffed = _diff("base/bench-scan.json", "cur/bench-scan.json")
    assert _warnings(diffed) == ["these bench certificates are of different GPU models "
                                 f"(TEST-GPU-2 and TEST-GPU): {ACROSS_MODELS} (the gate would "
                                 "not compare them)"]


# ------------------------------------------------------------------------------ exit codes

@pytest.mark.parametrize(("a", "b", "code"), [
    ("scan-c256", "scan-c256", 0),  # the same file
    ("chain-c256", "chain-c512", 0),  # parameter values only: the same graph
    ("scan-c256", "scan-c512", 1),  # topology
    ("converge-c256", "converge-c512", 1),  # launch shape
])
def test_snapshots(a: str, b: str, code: int) -> None:
    paths = [SNAPS / f"{name}.snapshot.json" for name in (a, b)]
    assert _diff(*paths).exit_code == code
    assert _diff(*paths, "--json").exit_code == code
    assert _diff(*paths, "--exit-zero").exit_code == 0
    summary = json.loads(_diff(*paths, "--json").stdout)["summary"]
    assert (summary in ("topology", "launch shape")) == (code == 1)


def test_topology_certificates(synthetic_cli: Path) -> None:
    recorded = committed_report("topology", "scan")
    assert _diff(recorded, recorded).exit_code == 0
    write_certificate(Path("a.json"), certificate("topology"))
    changed = certificate("topology")["results"]
    changed["classes"][1] = topology_class(512, topology_hash="synthetic other", kernels=5)
    write_certificate(Path("b.json"), certificate("topology", results=changed))
    assert _diff("a.json", "b.json").exit_code == 1
    assert json.loads(_diff("a.json", "b.json", "--json").stdout)["graphs_differ"] is True
    assert _diff("a.json", "b.json", "--exit-zero").exit_code == 0
    # a class in one certificate only differs too
    write_certificate(Path("c.json"), certificate("topology", results={
        "classes": [topology_class(256)]}))
    assert _diff("a.json", "c.json").exit_code == 1


def test_bench_certificates_exit_0_even_when_timings_moved() -> None:
    h100 = ROOT / "tests" / "fixtures" / "models" / "bench-chain-NVIDIA_H100_80GB_HBM3.json"
    assert _diff(h100, H200_CHAIN).exit_code == 0


def test_bad_input_stays_2_with_exit_zero(synthetic_cli: Path) -> None:
    snap = SNAPS / "scan-c256.snapshot.json"
    write_certificate(Path("t.json"), certificate("topology"))
    tampered = json.loads(Path("t.json").read_text())
    tampered["verdict"]["reasons"] = ["edited by hand (synthetic)"]
    Path("x.json").write_text(json.dumps(tampered))
    for args in ((snap, "nowhere.json"), (snap, "t.json"), ("t.json", "x.json")):
        for extra in ((), ("--exit-zero",)):
            result = _diff(*args, *extra)
            assert result.exit_code == 2, (args, result.output)
            assert len(result.stderr.strip().splitlines()) == 1


def test_the_help_documents_the_exit_codes() -> None:
    text = " ".join(_diff("--help").stdout.split())
    for piece in ("0 the graphs are the same", "1 the graphs differ", "2 bad input",
                  "--exit-zero"):
        assert piece in text
