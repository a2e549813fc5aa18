"""Framework steps on the GPU: each framework's example step captured by its own capture per
bucket, read and verified; the unsafe PyTorch step caught with its reason; a step that
synchronises in capture reported in one line; torch.compile's graphs kept and read.

Each framework test skips with its own reason when that framework cannot run (FrameworkMissing);
the GPU itself skips only through the gpu_ctx fixture (no driver / no device)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import graphcert
from graphcert.cert.results.verdict import Status
from graphcert.errors import FrameworkMissing
from graphcert.frameworks.adapters import adapter_for
from graphcert.kinds.topology.result import ClassResult, VerifyResult
from graphcert.model import NodeKind
from graphcert.workloads.registry import load

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "steps"


def _ready(framework: str) -> None:
    try:
        adapter_for(framework)
    except FrameworkMissing as exc:
        pytest.skip(exc.one_line())


def _example(file: str, name: str) -> tuple[str, Any]:
    ref = f"{EXAMPLES / file}:{name}"
    return ref, load(ref).step()


def _check_passed(result: VerifyResult, buckets: list[int]) -> None:
    assert result.verdict.status is Status.PASS, result.verdict.reasons
    assert [c.capacity for c in result.classes] == buckets
    for cls in result.classes:
        assert isinstance(cls, ClassResult) and cls.bucket is not None
        assert cls.counts.get(NodeKind.KERNEL.value, 0) >= 1, cls.counts
        assert cls.bucket.capture_s is not None and cls.bucket.capture_s > 0
        assert cls.bucket.replay_s and cls.bucket.eager_s
        key = cls.bucket.cache_key
        assert key is not None and key["topology_hash"] == cls.topology_hash
        assert all(s.output_equal for s in cls.samples)
    assert len(result.transitions) == len(buckets) - 1


def test_torch_step_verified_over_buckets(gpu_ctx: object) -> None:
    _ready("torch")
    ref, step = _example("torch_decode.py", "DECODE")
    result = graphcert.verify_step(step, "1,2,4,8,16,24,32", samples=3, ref=ref)
    _check_passed(result, [1, 2, 4, 8, 16, 24, 32])
    pools = [c.bucket.pool_bytes for c in result.classes
             if isinstance(c, ClassResult) and c.bucket]
    # the outputs live in each bucket's private pool: at least the largest bucket's shows
    assert all(p is not None and p >= 0 for p in pools) and max(pools) > 0, pools


def test_torch_step_certificate_from_the_cli(gpu_ctx: object, tmp_path: Path) -> None:
    _ready("torch")
    from graphcert.cert.store import load_certificate
    from graphcert.cli import cli

    ref = f"{EXAMPLES / 'torch_decode.py'}:DECODE"
    done = CliRunner().invoke(cli, ["verify", ref, "--classes", "vllm:16", "--samples", "2",
                                    "--out", str(tmp_path)])
    assert done.exit_code == 0, done.output
    (path,) = tmp_path.glob("topology-torch_decode-*.json")
    load_certificate(path)
    cert = json.loads(path.read_text())
    assert [c["bucket"]["cache_key"]["bucket"] for c in cert["results"]["classes"]] == \
        [1, 2, 4, 8, 16]


def test_unsafe_torch_step_is_caught_with_its_reason(gpu_ctx: object) -> None:
    _ready("torch")
    ref, step = _example("torch_unsafe.py", "UNSAFE")
    result = graphcert.verify_step(step, "4,8", samples=3, ref=ref)
    assert result.verdict.status is Status.FAIL
    cls = result.classes[1]
    assert isinstance(cls, ClassResult) and not cls.passed
    why = cls.reasons[0]
    assert why.startswith("step torch_unsafe, bucket 8, n=5: output 0 row 0 differs"), why
    assert "padded rows" in why
    assert cls.samples[-1].n == 8 and cls.samples[-1].output_equal is True


def test_cupy_step_verified_and_inventoried(gpu_ctx: object) -> None:
    _ready("cupy")
    ref, step = _example("cupy_step.py", "STEP")
    _check_passed(graphcert.verify_step(step, "1,2,8,16", samples=3, ref=ref), [1, 2, 8, 16])
    from graphcert.run.capture import capture_snapshot

    snap = capture_snapshot(ref, 8)
    assert snap.meta["capacity"] == 8 and snap.counts().get("kernel", 0) == 3, snap.counts()


def test_cuda_core_step_verified(gpu_ctx: object) -> None:
    _ready("cuda.core")
    ref, step = _example("cuda_core_step.py", "STEP")
    result = graphcert.verify_step(step, "1,2,8,16", samples=3, ref=ref)
    _check_passed(result, [1, 2, 8, 16])
    grids = [c.snapshot.nodes[0].attrs["grid"][0] for c in result.classes
             if isinstance(c, ClassResult) and c.snapshot is not None]
    assert grids == [2, 4, 16, 32]  # 512 columns per row, 256 threads a block
    assert {t.change for t in result.transitions} == {"launch shape"}


def test_watch_torch_compile_reads_the_recorded_graphs(gpu_ctx: object) -> None:
    _ready("torch")
    import torch

    from graphcert.sources import watch_torch_compile

    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(),
                                torch.nn.Linear(512, 256)).cuda().half().eval()
    compiled = torch.compile(model, mode="reduce-overhead")
    with watch_torch_compile() as watch, torch.no_grad():
        for batch in (8, 16):
            x = torch.randn(batch, 256, device="cuda", dtype=torch.float16)
            for _ in range(4):
                torch.compiler.cudagraph_mark_step_begin()
                compiled(x)
        torch.cuda.synchronize()
    assert torch.cuda.CUDAGraph.__name__ == "CUDAGraph"  # restored
    made = len(watch.graphs)
    assert len(watch.snapshots) + len(watch.empty) + len(watch.unreadable) == made
    # one graph per batch size (cuBLAS picks other GEMMs per batch), each with kernels; the
    # pool-setting empty graph of cudagraph trees is listed apart, with its reason
    assert len(watch.snapshots) >= 2, f"{made} made: {watch.empty} {watch.unreadable}"
    for snap in watch.snapshots:
        assert snap.counts().get("kernel", 0) >= 1, snap.counts()
    assert len({snap.topology_hash for snap in watch.snapshots}) >= 2


def test_torch_step_that_synchronises_in_capture_is_one_line(gpu_ctx: object) -> None:
    _ready("torch")
    import torch

    def syncs(x: Any) -> Any:
        scale = float(x.abs().max().item())  # a host read: not capturable
        return x / scale

    def make(n: int) -> tuple[Any]:
        return (torch.randn(n, 64, device="cuda", dtype=torch.float16),)

    step = graphcert.step(syncs, make, framework="torch", name="syncs")
    result = graphcert.verify_step(step, "vllm:64", samples=2)
    assert result.verdict.status is Status.FAIL
    (why,) = result.classes[3].reasons
    assert why.startswith("step syncs, bucket 8: "), why
    assert "\n" not in why
    # issue 33: the capture fails in all 11 buckets; the verdict says it once and counts the
    # other ten (each class keeps its own reason)
    from graphcert.kinds.topology.causes import Cause

    assert len(result.classes) == 11
    assert all(isinstance(c, ClassResult) and c.cause is Cause.CAPTURE
               for c in result.classes), [c.reasons for c in result.classes]
    first, count = result.verdict.reasons
    assert first.startswith("class 1: step syncs, bucket 1: "), first
    assert count.startswith("10 more class(es) fail the same way (capture refused): 2, 4, 8")
    torch.cuda.synchronize()  # the device is still usable afterwards


def test_torch_capture_that_fails_leaves_torch_as_it_was(gpu_ctx: object) -> None:
    """issue 33: after a capture that fails (a host read), the current stream, the default
    generator (out of capture mode, its offset unmoved) and the allocator are as they were: a
    graph captured before with random numbers still replays, torch.randn runs, and the next
    capture succeeds."""
    _ready("torch")
    import torch

    adapter = adapter_for("torch")
    adapter.prepare()
    noisy = graphcert.step(lambda x: x + torch.rand_like(x),
                           lambda n: (torch.zeros(n, 8, device="cuda"),), framework="torch",
                           name="noisy")
    syncs = graphcert.step(lambda x: x / float(x.abs().max().item()),
                           lambda n: (torch.ones(n, 8, device="cuda"),), framework="torch",
                           name="syncs")
    before = adapter.capture(noisy, adapter.static_inputs(noisy.make_inputs(4)))
    stream = torch.cuda.current_stream()
    gen = torch.cuda.default_generators[torch.cuda.current_device()]
    offset = gen.get_offset()
    with pytest.raises(Exception):  # noqa: B017 - torch's own error, whichever it raises
        adapter.capture(syncs, adapter.static_inputs(syncs.make_inputs(4)))
    assert torch.cuda.current_stream() == stream
    assert gen.get_offset() == offset
    try:
        before.launch()  # replay_prologue: raised while the generator stayed in capture mode
        torch.randn(4, device="cuda")  # what the next bucket's make_inputs does
        after = adapter.capture(noisy, adapter.static_inputs(noisy.make_inputs(8)))
        after.launch()
        after.release()
        torch.cuda.synchronize()
    finally:
        before.release()


def test_torch_pool_bytes_are_the_private_pools_segments(gpu_ctx: object) -> None:
    """pool_bytes is what the allocator's snapshot lists for the graph's private pool, also
    for a bucket captured after an earlier bucket's pool was released (its cached segments
    are taken without reserving more: reserved growth alone read 0 there on an H100)."""
    _ready("torch")
    import torch

    from graphcert.apicheck import as_tuple

    _, step = _example("torch_decode.py", "DECODE")
    adapter = adapter_for("torch")
    adapter.prepare()
    earlier = adapter.capture(step, adapter.static_inputs(as_tuple(step.make_inputs(64))))
    earlier.release()
    static = adapter.static_inputs(as_tuple(step.make_inputs(32)))
    captured = adapter.capture(step, static)
    try:
        pool = tuple(captured.pool)  # type: ignore[attr-defined]
        mine = [s for s in torch.cuda.memory_snapshot()
                if tuple(s.get("segment_pool_id", ())) == pool]
        assert captured.pool_bytes == sum(s["total_size"] for s in mine) > 0
    finally:
        captured.release()


@pytest.mark.parametrize(("framework", "file", "name"),
                         [("torch", "torch_decode.py", "DECODE"), ("cupy", "cupy_step.py", "STEP"),
                          ("cuda.core", "cuda_core_step.py", "STEP")])
def test_a_step_bench_times_device_and_clock_on_the_frameworks_stream(
        gpu_ctx: object, framework: str, file: str, name: str) -> None:
    """Issue 30 item 4: graphcert's harness on the framework's stream gives the queued device
    figure (cold and hot) for replay and eager, and the SM clock for the throttle check."""
    _ready(framework)
    from graphcert.buckets import parse_buckets
    from graphcert.cert.results.figures import Timing
    from graphcert.run.harness import BenchSettings
    from graphcert.run.steps_bench import bench_step
    from graphcert.stats import StopRule

    ref, step = _example(file, name)
    rule = StopRule(min_time_s=0.02, timeout_s=0.5)
    result = bench_step(step, ref, parse_buckets("8"), BenchSettings(rule))
    (row,) = result.sizes
    for way in (row.stream, row.graph):
        assert isinstance(way.device, Timing), way.device
        assert way.device.median_s > 0 and way.device.half_width is not None
    assert row.hot is not None and row.hot.get("stream") is not None
    # cuda.core's graphs (H100, driver 580): a second launch queued behind the blocking
    # kernel waits on the device, so the hot batch is unavailable, with the reason
    hot_graph = row.hot.get("graph")
    if framework == "cuda.core" and hot_graph is None:
        assert "blocking kernel timed out" in str(row.hot.to_json())
    else:
        assert hot_graph is not None
    assert row.clock_mhz is not None and row.clock_mhz["before"] > 100
    assert row.speedup["device"] is not None and result.wall_s is not None
    assert result.verdict.status is not Status.INCOMPLETE, result.verdict.reasons


def test_a_torch_step_runs_under_no_grad_as_often_as_documented(gpu_ctx: object) -> None:
    """docs/python-api.md: every call graphcert makes of a PyTorch step runs under
    torch.no_grad(), and per bucket fn is called warmup + 1 + 5 + S times (replays call no
    Python)."""
    _ready("torch")
    import torch

    layer = torch.nn.Linear(64, 64).cuda()  # its weights require grad, as a model's do
    seen: list[tuple[bool, int]] = []

    def probe(x: Any) -> Any:
        seen.append((torch.is_grad_enabled(), int(x.shape[0])))
        out = layer(x)
        assert out.grad_fn is None
        return out

    step = graphcert.step(probe, lambda n: (torch.randn(n, 64, device="cuda"),),
                          framework="torch", rtol=1e-4, atol=1e-4, name="grad_probe")
    result = graphcert.verify_step(step, "4,8", samples=2)
    assert result.verdict.passed, result.verdict.reasons
    assert not any(grad for grad, _ in seen), seen
    # bucket 4: 3 warm-ups, 1 captured, 5 timed, sizes 1 and 4; bucket 8: the same at 5, 8
    assert [rows for _, rows in seen] == ([4] * 9 + [1, 4]) + ([8] * 9 + [5, 8])
