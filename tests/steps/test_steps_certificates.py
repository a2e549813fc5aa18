"""What bench, verify and capture of a framework step write is valid: certificates against the
shipped schemas (graphcert's own check and jsonschema, the reference implementation), and
snapshots that load back. Over the synthetic framework of tests/_fakestep.py, on the CPU; the
GPU's environment block is the synthetic one of tests/_certfactory.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

import graphcert
from graphcert.buckets import parse_buckets
from graphcert.cert.document import certificate_of, validate_certificate
from graphcert.cert.schemas import load_schema
from graphcert.kinds.bench.result import BenchResult
from graphcert.model.io import load_snapshot
from graphcert.run.harness import BenchSettings
from graphcert.run.steps_bench import bench_step
from graphcert.stats import StopRule

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
import _certfactory as certfactory  # noqa: E402
import _fakestep as fake  # noqa: E402

from tests.steps.test_steps_cpu import HostClockHarness  # noqa: E402

QUICK = StopRule(max_noise=1.0, min_samples=3, min_time_s=0.0, timeout_s=0.2)


def assert_valid(cert: dict[str, Any]) -> None:
    assert validate_certificate(cert) == []
    jsonschema.Draft202012Validator(load_schema(str(cert["kind"]))).validate(cert)


def host_clock_harness(adapter: Any, settings: Any, device: int) -> Any:
    h = HostClockHarness()
    return h, h.close


def step_bench_certificate() -> tuple[BenchResult, dict[str, Any]]:
    result = bench_step(fake.SAFE, "x.py:SAFE", parse_buckets("4,8"), BenchSettings(QUICK),
                        open_harness=host_clock_harness)
    workload = certfactory.workload("x.py:SAFE", "rowwise", kind="bench")
    cert = certificate_of(result, workload=workload, environment=certfactory.environment())
    return result, cert


def test_a_step_bench_is_a_valid_bench_certificate_that_reads_back() -> None:
    """A step is timed with graphcert's harness on its framework's stream: the clock is read
    (its throttle check), the settings are the harness's plus the framework's name."""
    result, cert = step_bench_certificate()
    assert_valid(cert)
    assert cert["results"]["clock"] == {"before_mhz": 1980.0, "after_mhz": 1980.0}
    settings = cert["results"]["settings"]
    assert settings["framework"] == "synthetic" and settings["flush_l2"] is True
    assert settings["stopping"] == "precision" and cert["results"]["wall_s"] > 0
    back = BenchResult.from_json(cert["results"], cert["verdict"])
    assert back.clock_unavailable is None
    assert back.to_json() == result.to_json()


@pytest.mark.parametrize("field", ["before_mhz", "after_mhz"])
def test_a_step_bench_with_a_clock_that_is_no_number_is_refused(field: str) -> None:
    _, cert = step_bench_certificate()
    cert["results"]["clock"][field] = "unknown"
    assert validate_certificate(cert)
    assert not jsonschema.Draft202012Validator(load_schema("bench")).is_valid(cert)


def test_the_cli_writes_valid_step_certificates_and_snapshots(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bench --out (what failed on the H100: 'refusing to write an invalid certificate'),
    verify --out and capture --out of a step, through the CLI."""
    from graphcert.cli import cli
    from graphcert.run import environment, steps_bench

    monkeypatch.setattr(environment, "environment",
                        lambda device, git: certfactory.environment())
    monkeypatch.setattr(steps_bench, "framework_harness", host_clock_harness)
    user = tmp_path / "mystep.py"
    user.write_text(f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
                    "from _fakestep import SAFE\n")
    runner = CliRunner()
    out = tmp_path / "out"
    for args in (["bench", f"{user}:SAFE", "--classes", "4,8", "--max-noise", "1.0",
                  "--min-samples", "3", "--min-time", "0", "--timeout", "0.2"],
                 ["verify", f"{user}:SAFE", "--classes", "4,8", "--samples", "2"]):
        done = runner.invoke(cli, [*args, "--out", str(out)])
        assert done.exit_code == 0, done.output
    certs = sorted(out.glob("*.json"))
    assert {json.loads(p.read_text())["kind"] for p in certs} == {"bench", "topology"}
    from graphcert.workloads.registry import method_digest

    for path in certs:
        doc = json.loads(path.read_text())
        assert_valid(doc)
        # a step's method covers the framework-step code: the gate recomputes "<kind>+step"
        assert doc["workload"]["method_digest"] == method_digest(f"{doc['kind']}+step")
        assert doc["workload"]["method_digest"] != method_digest(doc["kind"])
    shots = tmp_path / "shots"
    done = runner.invoke(cli, ["capture", f"{user}:SAFE", "--classes", "4,16",
                               "--out", str(shots)])
    assert done.exit_code == 0, done.output
    snaps = sorted(shots.glob("*.json"))
    assert len(snaps) == 2
    loaded = [load_snapshot(p) for p in snaps]
    assert {s.meta["capacity"] for s in loaded} == {4, 16}
    assert loaded[0].topology_hash != loaded[1].topology_hash  # the gemm changes above 8
    assert graphcert.diff(loaded[0], loaded[1]) is not None
