"""Pooling over buffer placements, the typed results' new fields round-tripping through the
certificate and its schema, and the telemetry counters. CPU only; every sample here is
synthetic (made up to exercise the arithmetic, not a GPU recording)."""

from __future__ import annotations

import json
from dataclasses import replace

import jsonschema
import pytest

from graphcert import telemetry
from graphcert.cert.results.figures import Ended, Unavailable
from graphcert.cert.results.measure import (
    Context,
    HotTimings,
    PlacementContexts,
    PlacementSpread,
    Telemetry,
)
from graphcert.cert.schemas import check, load_schema
from graphcert.kinds.bench.result import BenchResult
from graphcert.placements import Sampled, pad_bytes, pooled
from tests._certfactory import bench_results


def test_pooled_median_is_median_of_placement_medians() -> None:
    # synthetic: four placements, the third one 10% slower
    per = [Sampled([1.0, 1.1, 0.9], Ended.NOISE_TARGET), Sampled([2.0, 2.0], Ended.TIMEOUT),
           Sampled([1.1, 1.1, 1.1, 1.1], Ended.NOISE_TARGET), Sampled([1.2], Ended.SAMPLE_CAP)]
    figure, spread, samples = pooled(per)
    assert spread is not None and spread.medians_s == (1.0, 2.0, 1.1, 1.2)
    assert spread.median_s == pytest.approx(1.15)
    assert spread.rel_range == pytest.approx((2.0 - 1.0) / 1.15)
    assert not isinstance(figure, Unavailable)
    assert figure.median_s == pytest.approx(1.15)
    assert figure.samples == 10 == len(samples)
    assert figure.min_s == 0.9 and figure.max_s == 2.0
    assert figure.ended is Ended.TIMEOUT  # the worst placement's ending


def test_a_figure_meets_its_precision_target_even_where_one_placement_timed_out() -> None:
    """Synthetic: under the precision rule the figure's own half-width decides how it ended.
    Three tight placements and one that timed out give a precise median of medians; a
    figure whose placements all scatter does not, and ends as its worst placement did."""
    import numpy as np

    rng = np.random.default_rng(7)
    tight = [list(1.0 + 0.001 * rng.standard_normal(400)) for _ in range(3)]
    per = [Sampled(t, Ended.PRECISION_TARGET, 0.02) for t in tight]
    per.append(Sampled(list(1.0 + 0.3 * rng.standard_normal(12)), Ended.TIMEOUT, 0.02))
    figure, _, _ = pooled(per)
    assert not isinstance(figure, Unavailable) and figure.half_width is not None
    assert figure.half_width <= 0.02 and figure.ended is Ended.PRECISION_TARGET
    loose = [Sampled(list(1.0 + 0.3 * rng.standard_normal(12)), Ended.TIMEOUT, 0.02)
             for _ in range(4)]
    figure, _, _ = pooled(loose)
    assert not isinstance(figure, Unavailable) and figure.ended is Ended.TIMEOUT
    assert figure.half_width is not None and figure.half_width > 0.02
    # the noise rule (no target) keeps the worst placement's ending
    figure, _, _ = pooled([Sampled(t, Ended.NOISE_TARGET) for t in tight]
                          + [Sampled([1.0, 1.0], Ended.TIMEOUT)])
    assert not isinstance(figure, Unavailable) and figure.ended is Ended.TIMEOUT


def test_unavailable_at_any_placement_is_unavailable() -> None:
    figure, spread, samples = pooled([Sampled([1.0, 1.0], Ended.NOISE_TARGET),
                                      Unavailable("blocker timed out")])
    assert figure == Unavailable("blocker timed out") and spread is None and samples == []


def test_pads_differ_per_placement() -> None:
    pads = [pad_bytes(k) for k in range(6)]
    assert pads[0] == 0 and len(set(pads)) == 6
    assert all(p % (2 << 20) for p in pads[1:])  # never a whole number of 2 MiB granules


def _enriched() -> BenchResult:
    base = BenchResult.from_json(bench_results((256, 1024)))
    row = base.sizes[0]
    spread = {"stream": {"device": PlacementSpread((2e-6, 2.1e-6, 1.9e-6, 2.05e-6))},
              "graph": {"device": PlacementSpread((1e-6, 1e-6, 1.01e-6, 0.99e-6))}}
    device = row.graph.device
    assert not isinstance(device, Unavailable)
    hot = HotTimings(Unavailable("synthetic: not measured"), device, {"stream": 64, "graph": 100})
    rows = (replace(row, placements=spread, hot=hot, contexts=PlacementContexts(4)),
            replace(base.sizes[1], contexts=PlacementContexts(2, "synthetic: a framework "
                                                                 "holds the context")),
            *base.sizes[2:])
    other = replace(base, sizes=rows, context=Context.FRESH)
    return replace(base, sizes=rows, context=Context.SEVERAL_STREAMS,
                   telemetry=Telemetry(120, 4096, 64, 2, 1), other_context=other)


def test_new_fields_round_trip_and_fit_the_schema() -> None:
    result = _enriched()
    doc = json.loads(json.dumps(result.to_json()))
    back = BenchResult.from_json(doc, result.verdict.to_json())
    assert back == result
    assert back.other_context is not None and back.other_context.context is Context.FRESH
    row = back.sizes[0]
    assert row.placements is not None
    assert row.placements["stream"]["device"].medians_s == (2e-6, 2.1e-6, 1.9e-6, 2.05e-6)
    from graphcert.cert.document import certificate_of
    from tests._certfactory import environment, workload

    cert = certificate_of(result, workload=workload("chain"), environment=environment())
    assert check(cert, load_schema("bench")) == []
    jsonschema.validate(cert, load_schema("bench"))
    broken = json.loads(json.dumps(cert))
    broken["results"]["context"] = "lukewarm"
    assert check(broken, load_schema("bench"))


def test_old_certificates_read_without_the_new_fields() -> None:
    old = BenchResult.from_json(bench_results())
    assert old.context is None and old.telemetry is None and old.other_context is None
    assert all(s.placements is None and s.hot is None and s.contexts is None
               for s in old.sizes)


def test_telemetry_window_counts_only_inside() -> None:
    telemetry.COUNTERS.sync()
    with telemetry.window() as counts:
        telemetry.COUNTERS.sync()
        telemetry.COUNTERS.sync()
        telemetry.COUNTERS.htod(100)
        telemetry.COUNTERS.dtoh(8)
    telemetry.COUNTERS.htod(5)
    assert counts == {"syncs": 2, "htod_bytes": 100, "dtoh_bytes": 8, "htod_copies": 1,
                      "dtoh_copies": 1}


def test_view_shows_placements_hot_state_and_telemetry() -> None:
    from rich.console import Console

    from graphcert.kinds.bench.views import bench_view

    console = Console(width=240, record=True)
    for item in bench_view("chain", _enriched()):
        console.print(item)
    text = console.export_text()
    assert "placements=4 in 4 contexts" in text and "device hot (L2 warm, per launch)" in text
    assert "in 2 contexts" in text and "one context: synthetic: a framework holds" in text
    assert "several-streams state (settled)" in text
    assert "fresh single-stream context (child process)" in text  # the other state, apart
    assert "120 synchronisations" in text and "4,096 B host→device" in text
    assert "9.9%/2.0%" in text  # synthetic device spreads: 0.2/2.025 and 0.02/1.0


def test_fresh_child_jobs_and_result_read_back() -> None:
    from graphcert.buckets import parse_buckets
    from graphcert.run.fresh import BenchJob, child_jobs, merge, parse_child
    from graphcert.run.harness import BenchSettings
    from graphcert.stats import StopRule

    settings = BenchSettings(StopRule(0.01, 12, 0.25, 3.0), flush_l2=False, placements=5,
                             hot=False, context="both")
    # the child times the fresh state: unsettled, and it starts no child of its own
    unsettled = replace(settings, settle=False, context="settled")
    (one,) = child_jobs("chain[kernels=16]", parse_buckets("1,2,4"), settings, 1)
    assert one == BenchJob("chain[kernels=16]", parse_buckets("1,2,4"), unsettled, 1)
    assert one.to_json()["classes"] == "1,2,4"  # a bucket list travels as its text
    assert [job.sizes for job in child_jobs("scan", [8, 100], settings, 0)] == [(8,), (100,)]
    result = _enriched()
    child = replace(result, other_context=None, context=Context.FRESH)
    doc = json.loads(json.dumps({"results": child.to_json(),
                                 "verdict": child.verdict.to_json()}))
    assert parse_child(doc) == child
    merged = merge([child, child])
    assert len(merged.sizes) == 2 * len(child.sizes)
    assert merged.telemetry == Telemetry(240, 8192, 128, 4, 2)


def test_cli_refuses_a_bad_context_in_one_line() -> None:
    from click.testing import CliRunner

    from graphcert.cli import cli

    out = CliRunner().invoke(cli, ["bench", "chain", "--context", "warm"])
    assert out.exit_code == 2 and "warm" in out.output and "Traceback" not in out.output


def test_bench_defaults_to_eight_placements_in_the_cli_and_the_harness() -> None:
    """Eight placements keep the stream path's spread between processes within nvbench's on
    the H100 and the H200 (benchmarks/NOTES.md, fifth session); four did not on the H100."""
    from graphcert.commands.bench import command
    from graphcert.run.harness import BenchSettings

    (option,) = [p for p in command.params if p.name == "placements"]
    assert option.default == BenchSettings().placements == 8
