"""`graphcert profile --span` on a GPU with CUPTI: for chain and chain[kernels=1000] at size
1, one GRAPH_TRACE record per replay, spans positive and no longer than the held device time
of the same replays plus 5% (that time also holds the graph's launch latency), the
certificate valid and gated against itself (PASS); and graphcert.run.profile_span on a
PyTorch graph. The distortion is printed, never asserted (no timed assertions in tests: the
lead reads the 1.01x target from a benchmark). Skips only without a driver or device
(gpu_ctx); a missing CUPTI fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphcert.cli import cli
from graphcert.cuda.context import RunContext

from .torch_fork import capture_fork

REPLAYS = 50
HELD_SLACK = 1.05  # a span within the held device time of its replays, plus 5%


@pytest.mark.parametrize("ref", ["chain", "chain[kernels=1000]"])
def test_span_mode_one_record_a_replay_and_a_certificate_the_gate_passes(
        gpu_ctx: RunContext, tmp_path: Path, ref: str) -> None:
    from graphcert.cert.document import validate_certificate
    from graphcert.cert.store import load_certificate
    from graphcert.kinds.profile.result import ProfileResult

    out = tmp_path / "reports"
    done = CliRunner().invoke(cli, ["profile", ref, "--size", "1", "--span", "--replays",
                                    str(REPLAYS), "--out", str(out), "--json"])
    assert done.exit_code == 0, done.output
    (run,) = json.loads(done.stdout)
    assert run["results"]["mode"] == "span"
    (path,) = out.glob("*.json")
    cert = load_certificate(path)  # the typed Certificate (its document checked)
    assert isinstance(cert.result, ProfileResult) and cert.result.mode == "span"
    assert validate_certificate(cert.document) == []
    (cls,) = cert.result.classes
    assert cls.profile is None
    s = cls.span
    assert s is not None, cls.overhead_reason
    assert s.replays == REPLAYS and s.records == REPLAYS and s.dropped == 0
    assert 0 < s.low_ns <= s.median_ns <= s.high_ns
    assert s.median_ns <= s.traced_ns * HELD_SLACK
    assert s.high_ns <= s.traced_interval[1] * HELD_SLACK
    assert cert.result.verdict.passed, cert.result.verdict
    print(f"{ref} span: median {s.median_ns:.0f} ns [{s.low_ns:.0f}, {s.high_ns:.0f}], held "
          f"untraced {s.untraced_ns:.0f} ns, traced {s.traced_ns:.0f} ns, distortion "
          f"{s.distortion:.4f}x {s.distortion_interval}")
    # a policy of its own: the repository's requires every workload's topology and bench
    policy = tmp_path / "policy.toml"
    policy.write_text("# this test's: no certificate required beyond the span profile\n")
    gated = CliRunner().invoke(cli, ["gate", str(out), "--baseline", str(out), "--policy",
                                     str(policy)])
    assert gated.exit_code == 0, gated.output
    assert "max_replay_regression pass" in gated.stdout


def test_span_class_of_a_torch_graph(gpu_ctx: RunContext) -> None:
    """A PyTorch graph read by address, timed on executables of graphcert's own."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if torch.version.cuda is None:
        pytest.skip(f"PyTorch {torch.__version__} was built without CUDA")
    from graphcert.cuda.graph import GraphRef
    from graphcert.cuda.handles import current_context, graph_from_address
    from graphcert.run.profile import harness_settings
    from graphcert.run.profile_span import span_class
    from graphcert.run.profile_trace import ProfileSettings, read_graph
    from graphcert.run.steps_bench import stream_harness
    from graphcert.sources.detect import graph_ref

    g, kept = capture_fork(torch)
    settings = ProfileSettings(REPLAYS, span=True)
    ref = graph_ref(g)
    stream = torch.cuda.current_stream()
    harness, close = stream_harness(int(stream.cuda_stream), harness_settings(settings),
                                    ref.device or 0)
    try:
        with current_context(ref.device or 0):
            read = read_graph(GraphRef(graph_from_address(ref.address)))
            cls = span_class(read, harness, settings, label="torch-fork", size=0)
    finally:
        close()
    assert cls.span is not None, cls.overhead_reason
    assert cls.span.records == REPLAYS and cls.span.median_ns > 0
    print("torch fork span", cls.span.median_ns, "distortion", cls.span.distortion)
    del kept
