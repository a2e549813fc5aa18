"""GPU tier of the CUDA layer: capture, explicit build of every node kind, capture failure
recovery, exec update, and the leak check."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from graphcert.cuda.context import RunContext
from graphcert.cuda.graph import Graph, capture
from graphcert.cuda.memory import DeviceBuffer
from graphcert.cuda.stream import BlockingKernel, Stream
from graphcert.errors import CaptureError, InputError

from .every_kind import N, build_every_kind


def _axpy(ctx: RunContext, kernels: Path):  # type: ignore[no-untyped-def]
    return ctx.kernel(kernels, "t_axpy")


@pytest.mark.parametrize("mode", ["global", "thread-local", "relaxed"])
def test_capture_instantiate_launch_matches_numpy(gpu_ctx: RunContext, stream: Stream,
                                                  test_kernels: Path, mode: str) -> None:
    rng = np.random.default_rng(1)
    n = 100_003
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    dx, dy = gpu_ctx.upload(x), gpu_ctx.upload(y)
    axpy = _axpy(gpu_ctx, test_kernels)
    grid = (n + 255) // 256
    with capture(stream, lambda: axpy.launch(stream, grid, 256, np.float32(2.5), dx, dy,
                                             np.uint32(n)), mode) as graph:
        assert not stream.is_capturing()
        with graph.instantiate() as exe:
            exe.upload(stream)
            exe.launch(stream)
            exe.launch(stream)
            stream.synchronize()
    got = dy.download(np.float32)
    want = y + np.float32(2.5) * x + np.float32(2.5) * x
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    gpu_ctx.release_buffers()


def test_global_capture_broken_by_alloc_recovers(gpu_ctx: RunContext, stream: Stream,
                                                 test_kernels: Path) -> None:
    """cuMemAlloc is illegal in a global-mode capture: the error names it, the partial graph
    is gone and the stream works afterwards."""
    out = gpu_ctx.upload(np.zeros(1, dtype=np.uint32))
    inc = gpu_ctx.kernel(test_kernels, "t_increment")

    def record() -> None:
        inc.launch(stream, 1, 1, out)
        DeviceBuffer(1 << 20)  # not capturable

    with pytest.raises(CaptureError) as info:
        capture(stream, record, "global")
    assert info.value.broken_by == "cuMemAlloc"
    assert "cuMemAlloc" in info.value.one_line()
    assert stream.capture_status() == "none"
    inc.launch(stream, 1, 1, out)  # the stream is usable again
    stream.synchronize()
    assert out.download(np.uint32)[0] == 1  # the captured launch never ran
    gpu_ctx.release_buffers()


def test_relaxed_capture_allows_alloc(gpu_ctx: RunContext, stream: Stream) -> None:
    buffers: list[DeviceBuffer] = []
    with capture(stream, lambda: buffers.append(DeviceBuffer(4096)), "relaxed") as graph:
        assert graph.node_handles() == []
    buffers[0].free()


def test_exception_in_recording_ends_capture(gpu_ctx: RunContext, stream: Stream) -> None:
    def record() -> None:
        raise RuntimeError("workload bug")

    with pytest.raises(CaptureError, match="RuntimeError: workload bug"):
        capture(stream, record, "thread-local")
    assert stream.capture_status() == "none"


def test_capture_on_two_threads_at_once(gpu_ctx: RunContext, test_kernels: Path) -> None:
    """Thread-local captures on two threads do not disturb each other."""
    inc = gpu_ctx.kernel(test_kernels, "t_increment")
    counters = [gpu_ctx.upload(np.zeros(1, dtype=np.uint32)) for _ in range(2)]
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            gpu_ctx.device.make_current()
            with Stream() as s:
                for _ in range(50):
                    with capture(s, lambda: inc.launch(s, 1, 1, counters[i]),
                                 "thread-local") as g, g.instantiate() as exe:
                        exe.launch(s)
                s.synchronize()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert [int(c.download(np.uint32)[0]) for c in counters] == [50, 50]
    gpu_ctx.release_buffers()


def test_builder_every_node_kind_runs(gpu_ctx: RunContext, stream: Stream,
                                      test_kernels: Path) -> None:
    """Explicit build of kernel, memset, memcpy, host, empty, child graph, event record and
    wait, mem alloc and free, and a conditional WHILE node; one launch checks each effect."""
    g = build_every_kind(gpu_ctx, test_kernels)
    with g.builder.graph.instantiate() as exe:
        exe.launch(stream)
        stream.synchronize()
    bufs = g.buffers
    assert (bufs["host_out"].array(np.uint32, N) == 7).all()
    assert g.host_calls == [1]
    assert bufs["counter"].download(np.uint32)[0] == 1
    assert bufs["loop"].download(np.uint32)[0] == 0
    assert bufs["iterations"].download(np.uint32)[0] == 5
    assert "digraph" in g.builder.graph.dot()
    g.close(gpu_ctx)


def test_exec_update_and_set_params(gpu_ctx: RunContext, stream: Stream,
                                    test_kernels: Path) -> None:
    axpy = _axpy(gpu_ctx, test_kernels)
    inc = gpu_ctx.kernel(test_kernels, "t_increment")
    x = gpu_ctx.upload(np.ones(512, dtype=np.float32))
    y = gpu_ctx.upload(np.zeros(512, dtype=np.float32))

    def rec(a: float) -> Graph:
        return capture(stream, lambda: axpy.launch(stream, 2, 256, np.float32(a), x, y,
                                                   np.uint32(512)))

    with rec(1.0) as g1, g1.instantiate() as exe, rec(3.0) as g3:
        result = exe.update(g3)
        assert result.ok and result.result == "success" and result.failing_node is None
        exe.launch(stream)
        stream.synchronize()
        assert (y.download(np.float32) == 3.0).all()
        # Another node: the topology changed, so the update is refused with a reason.
        def two_nodes() -> None:
            axpy.launch(stream, 2, 256, np.float32(1.0), x, y, np.uint32(512))
            inc.launch(stream, 1, 1, x)

        with capture(stream, two_nodes) as other:
            refused = exe.update(other)
        assert not refused.ok and refused.topology_changed
        assert refused.reason and "re-instantiate" in refused.reason
        # Same count, another node kind: the driver names the failing node.
        with capture(stream, lambda: y.memset_u32_async(0, 512, stream)) as memset_graph:
            swapped = exe.update(memset_graph)
            assert not swapped.ok and swapped.result == "node_type_changed"
            assert swapped.failing_node in {int(n) for n in memset_graph.node_handles()}
        # set-params on the exec's kernel node: a = 10, no re-capture.
        (node,) = g1.node_handles()
        params, keep = axpy.node_params(2, 256, np.float32(10.0), x, y, np.uint32(512))
        y.upload(np.zeros(512, dtype=np.float32))
        exe2 = g1.instantiate()
        exe2.set_kernel_params(node, params)
        exe2.launch(stream)
        stream.synchronize()
        del keep
        exe2.destroy()
        assert (y.download(np.float32) == 10.0).all()
    gpu_ctx.release_buffers()


def test_blocking_kernel_holds_then_times_out(gpu_ctx: RunContext, stream: Stream) -> None:
    kernel = gpu_ctx.kernel("graphcert_runtime.cu", "gc_block_until_released")
    blocker = BlockingKernel(kernel, timeout_s=0.2)
    with blocker.holding(stream):
        pass
    assert blocker.outcome() == BlockingKernel.RELEASED
    blocker.hold(stream)  # never released: it must end by itself
    stream.synchronize()
    assert blocker.outcome() == BlockingKernel.TIMED_OUT
    blocker.free()


def test_bad_device_index_is_clear(gpu_ctx: RunContext) -> None:
    from graphcert.cuda.device import Device

    with pytest.raises(InputError, match="--device 99 does not exist"):
        Device(99)


def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_no_leak_over_10000_cycles(gpu_ctx: RunContext, test_kernels: Path) -> None:
    """10,000 capture/instantiate/launch/destroy cycles: device memory back within 1 MiB and
    host RSS growth under 20 MiB (figures printed for the record)."""
    axpy = _axpy(gpu_ctx, test_kernels)
    x = gpu_ctx.upload(np.ones(256, dtype=np.float32))
    y = gpu_ctx.upload(np.zeros(256, dtype=np.float32))
    s = Stream()

    def cycle() -> None:
        with capture(s, lambda: axpy.launch(s, 1, 256, np.float32(1.0), x, y,
                                            np.uint32(256))) as g, g.instantiate() as exe:
            exe.launch(s)
        s.synchronize()

    for _ in range(200):  # warm allocator pools and caches before the baseline
        cycle()
    gpu_ctx.device.synchronize()
    free_before, rss_before = gpu_ctx.device.free_memory()[0], _rss_bytes()
    for _ in range(10_000):
        cycle()
    gpu_ctx.device.synchronize()
    free_after, rss_after = gpu_ctx.device.free_memory()[0], _rss_bytes()
    assert float(y.download(np.float32)[0]) == 10_200.0  # every launch ran
    s.destroy()
    gpu_ctx.release_buffers()
    device_delta = free_before - free_after
    rss_delta = rss_after - rss_before
    print(f"\nleak check: device free memory delta {device_delta / 2**20:.3f} MiB, "
          f"host RSS growth {rss_delta / 2**20:.2f} MiB over 10,000 cycles")
    assert device_delta <= 1 << 20
    assert rss_delta < 20 << 20
