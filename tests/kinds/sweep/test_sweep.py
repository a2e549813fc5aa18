"""The sweep: the a + b·N fit over figures recorded on a GPU, the sweep certificate (schema,
gate, show, HTML report) and certificate names that carry the workload's options. CPU only.

RECORDED: the per-kernel figures below are graphcert's own, measured on the device tool's
H200 on 2026-11-21 and written down in benchmarks/NOTES.md ("graphcert before" column of the
fidelity table: 16, 64 and 256-kernel chains, one process, several-streams state, L2 cleared).
They are device medians per kernel/node; each point's total is that times N. Nothing else in a
point is recorded: the host and end-to-end timings are synthetic placeholders (flagged)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from _certfactory import bench_size, certificate, timing, workload
from click.testing import CliRunner

from graphcert.cert.document import make_certificate, write_certificate
from graphcert.cert.schemas import check, load_schema
from graphcert.cli import cli
from graphcert.kinds.bench.result import SizeResult
from graphcert.kinds.sweep.result import SweepFit
from graphcert.run.bench import fit_sweep

# kernels -> (stream device µs per kernel, graph device µs per node), benchmarks/NOTES.md
RECORDED_H200 = {16: (1.7544, 1.1271), 64: (1.5245, 1.0046), 256: (1.5012, 0.9660)}


def _point(kernels: int) -> SizeResult:
    stream_us, graph_us = RECORDED_H200[kernels]
    doc: dict[str, Any] = bench_size(1, node_count=kernels)  # synthetic shell
    doc["stream"]["device"] = timing(stream_us * kernels * 1e-6)
    doc["graph"]["device"] = timing(graph_us * kernels * 1e-6)
    ratio = stream_us / graph_us  # the device speedup follows the device timings
    doc["speedup"]["device"] = {"median": ratio, "low": ratio * 0.95, "high": ratio * 1.05}
    return SizeResult.from_json(doc)


def recorded_fit() -> SweepFit:
    return fit_sweep("kernels", [(k, _point(k)) for k in sorted(RECORDED_H200)])


def test_fit_of_recorded_h200_figures() -> None:
    fit = recorded_fit()
    graph, stream = fit.fit["graph"]["device"], fit.fit["stream"]["device"]
    assert graph is not None and stream is not None
    # per node the graph costs b, within the recorded per-node range at 64..256 nodes
    assert 0.94e-6 < graph.b_s < 0.97e-6, graph
    assert 1.0e-6 < graph.a_s < 4.0e-6, graph  # a fixed cost of a few µs per launch
    assert 1.47e-6 < stream.b_s < 1.51e-6, stream
    assert graph.r2 > 0.9999 and stream.r2 > 0.9999
    assert graph.b_s < stream.b_s  # a node is cheaper than a stream launch


def _sweep_cert() -> dict[str, Any]:
    fit = recorded_fit()
    names = tuple(f"bench-chain_kernels_{k}-TEST-GPU.json" for k in fit.values)
    from dataclasses import replace

    fit = replace(fit, certificates=names)
    return make_certificate("sweep", workload=workload("chain", kind="sweep"),
                            environment=certificate()["environment"], results=fit.to_json(),
                            verdict=fit.verdict.to_json())


def test_sweep_certificate_round_trips_and_fits_its_schema() -> None:
    cert = _sweep_cert()
    jsonschema.validate(cert, load_schema("sweep"))
    assert check(cert, load_schema("sweep")) == []
    back = SweepFit.from_json(cert["results"], cert["verdict"])
    assert back == recorded_fit().__class__(**{**recorded_fit().__dict__,
                                              "certificates": back.certificates})
    assert [p.node_count for p in back.points] == [16, 64, 256]
    bad = json.loads(json.dumps(cert))
    bad["results"]["fit"]["graph"]["device"] = {"a_s": 1.0}
    assert check(bad, load_schema("sweep"))


@pytest.fixture
def in_tmp(synthetic_cli: Path) -> Path:
    return synthetic_cli


def test_gate_reads_and_shows_a_sweep_certificate(in_tmp: Path) -> None:
    Path("reports").mkdir()
    write_certificate(Path("reports/sweep-chain_kernels-TEST-GPU.json"), _sweep_cert())
    write_certificate(Path("reports/bench-chain.json"), certificate("bench", ref="chain"))
    runner = CliRunner()
    gate = runner.invoke(cli, ["gate", "reports"], catch_exceptions=False)
    assert gate.exit_code == 0, gate.output
    assert "sweep-chain_kernels-TEST-GPU.json" in gate.stdout
    report = runner.invoke(cli, ["report", "reports", "-o", "report.html"],
                           catch_exceptions=False)
    assert report.exit_code == 0, report.output
    html = Path("report.html").read_text()
    assert "Sweep over kernels = 16, 64, 256" in html and "0.9" in html
    shown = runner.invoke(cli, ["show", "reports/sweep-chain_kernels-TEST-GPU.json"],
                          catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert "cost per launch = a + b·kernels" in shown.stdout
    assert "bench-chain_kernels_64-TEST-GPU.json" in shown.stdout


def test_certificate_names_carry_options() -> None:
    from graphcert.run.environment import labelled, sweep_filename
    from graphcert.workloads.registry import load

    assert labelled(load("chain")) == "chain"
    assert labelled(load("chain[kernels=10]")) == "chain[kernels=10]"
    assert sweep_filename(load("chain"), "kernels", "NVIDIA H200") == \
        "sweep-chain_kernels-NVIDIA_H200.json"
    from graphcert.cert.document import certificate_filename

    names = {certificate_filename("bench", labelled(load(f"chain[kernels={k}]")), "H100")
             for k in (1, 10, 100, 1000)}
    assert len(names) == 4 and "bench-chain_kernels_10-H100.json" in names


def test_diff_of_sweep_certificates_is_refused_in_one_line(in_tmp: Path) -> None:
    write_certificate(Path("a.json"), _sweep_cert())
    write_certificate(Path("b.json"), _sweep_cert())
    out = CliRunner().invoke(cli, ["diff", "a.json", "b.json"])
    assert out.exit_code == 2 and "sweep certificates are not diffed" in out.output
    assert "Traceback" not in out.output
