"""bench on a GPU: sanity of the figures (not timings asserted as targets), the certificate,
and a blocking-kernel timeout that marks the queued figure unavailable instead of hanging."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphcert.cert.results.figures import Ended, Timing, Unavailable
from graphcert.cert.schemas import check, load_schema
from graphcert.cert.store import load_certificate
from graphcert.cuda.context import RunContext
from graphcert.errors import GraphcertError
from graphcert.run import environment
from graphcert.run.bench import BenchSettings, bench
from graphcert.stats import StopRule

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "workloads" / "scale.py"
QUICK = StopRule(max_noise=0.02, min_samples=10, min_time_s=0.05, timeout_s=1.0)


@pytest.mark.parametrize("kernels", [16, 64])
def test_graph_node_cheaper_than_queued_stream_kernel(gpu_ctx: RunContext, kernels: int) -> None:
    result = bench(gpu_ctx, f"chain[kernels={kernels}]", [1], BenchSettings(QUICK))
    (row,) = result.sizes
    assert row.node_count == kernels
    assert row.stream_path == "prepacked" and row.stream_ops == kernels
    assert isinstance(row.stream.device, Timing) and isinstance(row.graph.device, Timing)
    stream_dev = row.stream.device.median_s / kernels
    graph_dev = row.graph.device.median_s / kernels
    assert graph_dev < stream_dev
    # order of magnitude only: a launch costs between 0.1 and 100 µs
    for way in ("stream", "graph"):
        for q in ("host_enqueue", "device", "end_to_end"):
            timing = row.way(way).get(q)
            assert timing is not None and timing.ended in (Ended.PRECISION_TARGET, Ended.TIMEOUT)
            assert timing.half_width is not None
            per = timing.median_s / kernels
            assert 1e-8 < per < 1e-4, (way, q, per)
    sp = row.speedup["device"]
    assert sp is not None and sp.low <= sp.median <= sp.high


def test_bench_certificate_has_every_field(gpu_ctx: RunContext, tmp_path: Path) -> None:
    ref = f"{FIXTURE}:Scale"
    from graphcert.workloads.registry import load

    loaded = load(ref)
    result = bench(gpu_ctx, ref, [1000, 4096], BenchSettings(QUICK), workload=loaded.native())
    env = environment.environment(0, git=None)
    path = environment.write(result, tmp_path, loaded, env, key=None)
    cert = load_certificate(path).document  # the JSON as written, checked
    assert cert["verdict"]["status"] == result.verdict.status.value
    assert check(cert, load_schema("bench")) == []
    for row in cert["results"]["sizes"]:
        assert set(row["upfront"]) >= {"capture_s", "instantiate_s", "upload_s",
                                       "first_launch_s", "exec_update_s", "set_params_s"}
        assert all(v is not None and v >= 0 for v in row["upfront"].values())
        assert row["graph"]["device"] is not None
        assert row["graph"]["device"]["ended"] in ("precision_target", "timeout")
    assert cert["results"]["clock"]["before_mhz"] > 100


def test_blocker_timeout_marks_device_unavailable(gpu_ctx: RunContext) -> None:
    settings = BenchSettings(QUICK, blocker_timeout_s=1e-6)
    (row,) = bench(gpu_ctx, "chain[kernels=8]", [1], settings).sizes
    for way in ("stream", "graph"):
        device = row.way(way).device
        assert isinstance(device, Unavailable) and "timed out" in device.reason
        assert row.way(way).host_enqueue.median_s > 0
        assert row.way(way).to_json()["device"] is None
    assert row.speedup["device"] is None


def test_placements_hot_and_telemetry_are_recorded(gpu_ctx: RunContext) -> None:
    settings = BenchSettings(QUICK, placements=3)
    result = bench(gpu_ctx, "chain[kernels=16]", [1], settings)
    (row,) = result.sizes
    assert row.placements is not None
    for side in ("stream", "graph"):
        spread = row.placements[side]["device"]
        assert len(spread.medians_s) == 3
        device = row.way(side).device
        assert isinstance(device, Timing) and device.median_s == spread.median_s
        assert set(row.placements[side]) >= {"host_enqueue", "end_to_end", "hot_device"}
    assert row.hot is not None
    assert row.hot.batch["graph"] > 1
    for side in ("stream", "graph"):
        hot = row.hot.get(side)
        assert hot is not None and 1e-8 < hot.median_s / 16 < 1e-4, (side, hot)
    tel = result.telemetry
    assert tel is not None and tel.syncs > 100 and tel.dtoh_bytes >= 16 and tel.htod_bytes > 0
    assert result.context is not None and result.context.value == "several_streams"
    assert result.settings["placements"] == 3


def test_context_both_reports_the_fresh_state_apart(gpu_ctx: RunContext, tmp_path: Path
                                                    ) -> None:
    from graphcert.cert.results.measure import Context
    from graphcert.options import Options
    from graphcert.run.jobs import bench_workloads

    settings = BenchSettings(QUICK, placements=1, hot=False, context="both")
    (done,) = bench_workloads(["chain[kernels=64]"], [1], settings, out_dir=tmp_path,
                              options=Options())
    result = done.result
    assert result.context is Context.SEVERAL_STREAMS
    fresh = result.other_context
    assert fresh is not None and fresh.context is Context.FRESH
    assert fresh.settings["context_settled_launches"] == 0
    settled_dev, fresh_dev = result.sizes[0].graph.device, fresh.sizes[0].graph.device
    assert isinstance(settled_dev, Timing) and isinstance(fresh_dev, Timing)
    # benchmarks/NOTES.md: graph nodes run ~20-35% faster in a fresh single-stream context.
    assert fresh_dev.median_s < 0.95 * settled_dev.median_s, (fresh_dev, settled_dev)
    assert done.certificate is not None
    cert = load_certificate(done.certificate).document
    assert cert["results"]["other_context"]["context"] == "fresh_single_stream"


def _current_context_id() -> int:
    from cuda.bindings import driver

    _, ctx = driver.cuCtxGetCurrent()
    err, unique = driver.cuCtxGetId(ctx)  # unique per context made in this process
    assert int(err) == 0
    return int(unique)


def test_renewed_context_loads_kernels_again_and_runs(gpu_ctx: RunContext) -> None:
    from graphcert.cuda.stream import Stream

    before = gpu_ctx.generation
    old = gpu_ctx.kernel("graphcert_runtime.cu", "gc_empty")
    compiled = len(gpu_ctx.builds)
    old_id = _current_context_id()
    reason = gpu_ctx.renew()
    if reason is not None:  # something else in this test process holds the context
        pytest.skip(f"the primary context is shared in this process: {reason}")
    assert gpu_ctx.generation == before + 1
    assert _current_context_id() != old_id  # the driver made a new context
    with pytest.raises(GraphcertError, match="unloaded"):
        old.prepare(1, 1)  # a kernel taken before the renewal refuses to launch
    empty = gpu_ctx.kernel("graphcert_runtime.cu", "gc_empty")  # loaded again, not compiled
    assert len(gpu_ctx.builds) == compiled
    with Stream() as s:
        empty.launch(s, 1, 1)
        s.synchronize()


def test_a_renewal_is_refused_while_another_holder_has_the_context(gpu_ctx: RunContext
                                                                    ) -> None:
    from graphcert.cuda.device import Device

    other = Device(0)  # a second retain of the primary context, as a framework holds one
    try:
        before = gpu_ctx.generation
        result = bench(gpu_ctx, "chain[kernels=8]", [1],
                       BenchSettings(QUICK, placements=2, hot=False))
        (row,) = result.sizes
        assert row.contexts is not None and row.contexts.count == 1
        assert row.contexts.kept is not None and "still holds it" in row.contexts.kept
        assert gpu_ctx.generation == before
        assert isinstance(row.stream.device, Timing)  # both placements still measured
        assert row.placements is not None
        assert len(row.placements["stream"]["device"].medians_s) == 2
    finally:
        other.release()
    gpu_ctx.device.make_current()


@pytest.mark.usefixtures("gpu_ctx")  # skips without a driver
def test_each_placement_runs_in_a_new_context_in_a_fresh_process() -> None:
    # A child process: in this one the test session's fixtures share the context.
    import json
    import subprocess
    import sys

    from tests._env import child_env

    done = subprocess.run(
        [sys.executable, "-m", "graphcert", "bench", "chain[kernels=16]", "--size", "1",
         "--placements", "3", "--no-hot", "--timeout", "0.5", "--min-time", "0.05",
         "--no-certificate", "--json"], capture_output=True, text=True, env=child_env(),
        timeout=300, check=False)
    # 1: a verdict other than pass (a throttled clock), still with the JSON on stdout
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr[-2000:]
    (run,) = json.loads(done.stdout)["runs"]
    (row,) = run["results"]["sizes"]
    assert row["contexts"] == {"count": 3, "kept": None}
    assert run["results"]["settings"]["new_contexts"] is True
    medians = row["placements"]["stream"]["device"]["medians_s"]
    assert len(medians) == 3 and all(1e-7 < m < 1e-3 for m in medians)


@pytest.mark.usefixtures("gpu_ctx")  # skips without a driver
def test_a_sweep_keeps_every_run_and_a_fit_the_gate_reads(tmp_path: Path) -> None:
    # A child process, as above; the quick settings keep it to seconds, not figures.
    import subprocess
    import sys

    from graphcert.kinds.sweep.result import SweepFit
    from tests._env import child_env

    common = ["--size", "1", "--placements", "1", "--no-hot", "--timeout", "0.3",
              "--min-time", "0.05"]
    done = subprocess.run(
        [sys.executable, "-m", "graphcert", "bench", "chain", "--sweep", "kernels=1,10,100",
         *common, "--out", str(tmp_path)], capture_output=True, text=True, env=child_env(),
        timeout=300, check=False)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr[-2000:]
    runs = sorted(p.name for p in tmp_path.glob("bench-chain_kernels_*.json"))
    assert len(runs) == 3, runs  # one per value: none overwrote another
    (sweep_file,) = tmp_path.glob("sweep-chain_kernels-*.json")
    cert = load_certificate(sweep_file).document
    assert check(cert, load_schema("sweep")) == []
    fit = SweepFit.from_json(cert["results"], cert["verdict"])
    assert fit.key == "kernels" and list(fit.values) == [1, 10, 100]
    assert sorted(n for n in fit.certificates if n) == runs
    line = fit.fit["graph"]["device"]
    assert line is not None and line.b_s > 0  # a node more costs device time
    gate = subprocess.run([sys.executable, "-m", "graphcert", "gate", str(tmp_path)],
                          capture_output=True, text=True, env=child_env(), cwd=tmp_path,
                          timeout=120, check=False)
    assert "Traceback" not in gate.stderr and sweep_file.name in gate.stdout, gate.stdout
