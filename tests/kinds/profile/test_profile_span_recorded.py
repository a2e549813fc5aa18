"""Span-mode certificates recorded on an H200 (tests/fixtures/profile/span/, b70d82a: see
tests/fixtures/README.md): one GRAPH_TRACE record a replay, spans inside the held replay
time, the distortion the evidence recomputes, the WHILE graph the driver would not
instantiate twice incomplete with its reason, and the gate reading the folder against
itself by max_replay_regression."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from graphcert.cert.results.verdict import Status
from graphcert.cert.store import load_certificate
from graphcert.cli import cli
from graphcert.kinds.profile.result import ProfileResult
from graphcert.kinds.profile.span import SPAN_MODE
from graphcert.kinds.profile.views import profile_view

SPAN = Path(__file__).resolve().parents[2] / "fixtures" / "profile" / "span"
PATHS = sorted(SPAN.glob("profile-*.json"))


def _result(path: Path) -> ProfileResult:
    result = load_certificate(path).result
    assert isinstance(result, ProfileResult) and result.mode == SPAN_MODE
    return result


def test_the_recorded_span_certificates_are_there() -> None:
    assert [p.name for p in PATHS] == [
        "profile-chain-NVIDIA_H200.json", "profile-chain_kernels_1000-NVIDIA_H200.json",
        "profile-converge-NVIDIA_H200.json", "profile-scan-NVIDIA_H200.json",
        "profile-torch_decode-NVIDIA_H200.json"]


@pytest.mark.parametrize("path", [p for p in PATHS if "converge" not in p.name],
                         ids=lambda p: p.name)
def test_one_record_a_replay_and_spans_inside_the_held_time(path: Path) -> None:
    result = _result(path)
    assert result.verdict.status is Status.PASS
    for cls in result.classes:
        s = cls.span
        assert cls.profile is None and s is not None
        assert s.records == s.replays == result.replays and s.dropped == 0
        assert 0 < s.low_ns <= s.median_ns <= s.high_ns
        # the held time holds the span and the launch around it
        assert s.median_ns <= s.traced_ns * 1.01
        assert s.distortion == pytest.approx(s.traced_ns / s.untraced_ns)
        assert s.distortion >= 0.99  # GRAPH_TRACE never read faster than untraced here
    console = Console(width=200, record=True, file=io.StringIO())
    for part in profile_view(result.workload, result):
        console.print(part)
    text = console.export_text()
    assert "replay span" in text and "distortion" in text and "top " not in text


def test_the_large_graph_meets_the_target_and_the_small_ones_are_noted() -> None:
    big = _result(SPAN / "profile-chain_kernels_1000-NVIDIA_H200.json")
    (cls,) = big.classes
    assert cls.span is not None and cls.span.distortion <= 1.01 and big.notes == ()
    small = _result(SPAN / "profile-chain-NVIDIA_H200.json")
    (note,) = small.notes
    assert "GRAPH_TRACE stretched a replay" in note


def test_a_graph_instantiated_once_only_is_incomplete_with_its_reason() -> None:
    result = _result(SPAN / "profile-converge-NVIDIA_H200.json")
    (cls,) = result.classes
    assert cls.span is None and cls.overhead_reason is not None
    assert "would not instantiate a second executable" in cls.overhead_reason
    assert "conditional" in cls.overhead_reason
    assert result.verdict.status is Status.INCOMPLETE


def test_the_gate_reads_the_spans_against_themselves(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("allow_incomplete = true\n")
    folder = tmp_path / "span"
    folder.mkdir()
    for path in PATHS:
        if "converge" not in path.name:
            (folder / path.name).write_bytes(path.read_bytes())
    done = CliRunner().invoke(cli, ["gate", str(folder), "--baseline", str(folder),
                                    "--policy", str(policy)])
    assert done.exit_code == 0, done.output
    assert "max_replay_regression pass" in " ".join(done.stdout.split())
