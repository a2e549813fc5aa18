"""Probes behind benchmarks/NOTES.md: why graphcert and nvbench once disagreed on device time
(the driver's one-stream and several-streams states), and what moves the stream path between
processes (where its buffers lie).

Each probe runs in a fresh process, because the state a context is in cannot be undone, and
prints one JSON line; `--matrix` runs a set of them and prints a table. The `nvbench` probes
need cuda-bench 0.3.0.

    python benchmarks/fidelity_probe.py [--matrix tools|upload] [--kernels 16,64,256]
    python benchmarks/fidelity_probe.py --one trigger 1000-kernels-other 64
    python benchmarks/fidelity_probe.py --one placement x 16
    python benchmarks/fidelity_probe.py --one codeload x 16
    python benchmarks/fidelity_probe.py --one contexts x 16
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphcert.cuda import oplog  # noqa: E402
from graphcert.cuda.context import RunContext  # noqa: E402
from graphcert.cuda.memory import PinnedBuffer  # noqa: E402
from graphcert.cuda.stream import Stream  # noqa: E402
from graphcert.run.bench import BenchSettings, Harness  # noqa: E402
from graphcert.run.session import WorkloadSession  # noqa: E402
from graphcert.stats import StopRule, summarize  # noqa: E402

TIMESTAMPS = r"""
extern "C" __global__ void probe_timestamps(unsigned long long* host_out) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    host_out[0] = t;
    host_out[1] = clock64();
}
"""


class UnsettledHarness(Harness):
    """The bench harness without its context settling: probes look at the state itself."""

    def _settle_context(self) -> None:
        pass


def _setup(ctx: RunContext, k: int, stream: Stream, upload: bool = True
           ) -> tuple[Any, Any, Any, list[Any]]:
    session = WorkloadSession(ctx, f"chain[kernels={k}]")
    session.prepare(1)
    with oplog.recording() as ops:
        session.run_eager(stream, 1)
    graph = session.record_graph(stream, 1)
    exe = graph.instantiate()
    if upload:
        exe.upload(stream)
    for _ in range(10):
        exe.launch(stream)
    stream.synchronize()
    return session, graph, exe, list(ops)


def probe_ours(k: int, variant: str) -> dict[str, Any]:
    """graphcert's Harness.device_samples; variants change one thing toward nvbench."""
    with RunContext.open(0) as ctx:
        harness = Harness if variant == "settled" else UnsettledHarness
        h = harness(ctx, BenchSettings(StopRule(), flush_l2=True))
        # other-stream: uploaded and warmed on a second stream, timed on the harness's;
        # reupload: then uploaded again on the harness's; first-launch-*: never uploaded,
        # warmed by launches on the harness's stream (here) or a second one (other)
        foreign = variant in ("other-stream", "reupload", "first-launch-other")
        upload_stream = Stream() if foreign else h.stream
        session, graph, exe, ops = _setup(ctx, k, upload_stream,
                                          upload=not variant.startswith("first-launch"))
        upload_stream.synchronize()
        if variant == "reupload":
            exe.upload(h.stream)
            h.stream.synchronize()
        if variant == "timestamps":
            # nvbench brackets the timed region with a kernel that writes host-mapped memory
            path = Path(tempfile.mkdtemp()) / "probe_ts.cu"
            path.write_text(TIMESTAMPS)
            ts = ctx.kernel(path, "probe_timestamps")
            host = PinnedBuffer(16, mapped=True)
            ptr = int(host.device_ptr or 0)

            def graph_path(s: Stream) -> None:
                ts.launch(s, 1, 1, np.uint64(ptr))
                exe.launch(s)

            def stream_path(s: Stream) -> None:
                ts.launch(s, 1, 1, np.uint64(ptr))
                for op in ops:
                    op(s)
        else:
            def graph_path(s: Stream) -> None:
                exe.launch(s)

            def stream_path(s: Stream) -> None:
                for op in ops:
                    op(s)
        out: dict[str, Any] = {
            "graph": summarize(h.device_samples(graph_path, 1).samples).to_json(),
            "stream": summarize(h.device_samples(stream_path, len(ops)).samples).to_json(),
            "clock_mhz": h.clock_mhz()}
        exe.destroy()
        graph.destroy()
        session.release()
        h.close()
    return {w: {"mean_us": out[w]["mean_s"] / k * 1e6, "median_us": out[w]["median_s"] / k * 1e6,
                "noise": out[w]["noise"]} for w in ("graph", "stream")} | {
        "clock_mhz": out["clock_mhz"]}


def probe_nvbench(k: int, variant: str) -> dict[str, Any]:
    """nvbench's cold and batch figures; variants: default, same-stream, no-blocker."""
    import cuda.bench as nvb

    with RunContext.open(0) as ctx:
        s = Stream()
        session, graph, exe, ops = _setup(ctx, k, s)

        def configure(state: Any) -> None:
            if variant == "same-stream":
                state.set_stream(s)
            if variant == "no-blocker":
                state.set_disable_blocking_kernel(True)

        def graph_bench(state: Any) -> None:
            configure(state)
            state.exec(lambda launch: exe.launch(
                Stream.borrow(launch.get_stream().__cuda_stream__()[1])))

        def stream_bench(state: Any) -> None:
            configure(state)

            def run(launch: Any) -> None:
                st = Stream.borrow(launch.get_stream().__cuda_stream__()[1])
                for op in ops:
                    op(st)
            state.exec(run)

        nvb.register(graph_bench).set_name("graph")
        nvb.register(stream_bench).set_name("stream")
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "nvbench.json"
            nvb.run_all_benchmarks(["probe", "--devices", "0", "--json", str(out), "-q"])
            doc = json.loads(out.read_text())
        s.synchronize()
    result: dict[str, Any] = {}
    for bench_doc in doc["benchmarks"]:
        tags = {}
        for summary in bench_doc["states"][0]["summaries"]:
            data = {d["name"]: d for d in summary["data"]}
            if "value" in data:
                try:
                    tags[summary["tag"]] = float(data["value"]["value"])
                except (TypeError, ValueError):
                    pass
        result[bench_doc["name"]] = {
            "mean_us": tags.get("nv/cold/time/gpu/mean", float("nan")) / k * 1e6,
            "batch_us": tags.get("nv/batch/time/gpu/mean", float("nan")) / k * 1e6,
            "noise": tags.get("nv/cold/time/gpu/stdev/relative"),
            "tags": {t: v for t, v in tags.items() if "clock" in t or "freq" in t},
        }
    return result


def _measure(h: Harness, exe: Any, ops: list[Any], k: int) -> dict[str, float]:
    def stream_path(s: Stream) -> None:
        for op in ops:
            op(s)

    g = summarize(h.device_samples(exe.launch, 1).samples)
    st = summarize(h.device_samples(stream_path, len(ops)).samples)
    return {"graph": g.mean_s / k * 1e6, "stream": st.mean_s / k * 1e6}


def probe_trigger(k: int, trigger: str) -> dict[str, Any]:
    """One process, one exec on the harness's stream, measured before and after one thing
    happens elsewhere in the context (see NOTES.md: the slower state it may switch on)."""
    import time

    with RunContext.open(0) as ctx:
        rule = StopRule(min_time_s=0.3, timeout_s=2.0)
        h = UnsettledHarness(ctx, BenchSettings(rule, flush_l2=True))
        session, graph, exe, ops = _setup(ctx, k, h.stream)
        empty = ctx.kernel("graphcert_runtime.cu", "gc_empty")
        other = Stream()
        scratch = ctx.alloc(1 << 20)

        def kernels_on_other(count: int) -> None:
            for _ in range(count):
                empty.launch(other, 1, 1)

        def queued_on_other(count: int) -> None:
            # pending at once behind a blocking kernel, as a native loop's launches are
            # (graphcert's settle launches from Python never queue up: NOTES.md, H200)
            with h.blocker.holding(other):
                kernels_on_other(count)

        def event_on_other() -> None:
            from graphcert.cuda.stream import Event
            e = Event()
            e.record(other)
            e.synchronize()
            e.destroy()

        triggers = {
            "idle-3s": lambda: time.sleep(3),
            "1-kernel-other": lambda: kernels_on_other(1),
            "10-kernels-other": lambda: kernels_on_other(10),
            "100-kernels-other": lambda: kernels_on_other(100),
            "300-kernels-other": lambda: kernels_on_other(300),
            "1000-kernels-other": lambda: kernels_on_other(1000),
            "2000-kernels-other": lambda: kernels_on_other(2000),
            "1000-kernels-other-queued": lambda: queued_on_other(1000),
            # bench's own settle (run/harness.py): SETTLE_LAUNCHES queued in batches
            "harness-settle": lambda: Harness._settle_context(h),
            "memset-other": lambda: scratch.memset_u32_async(0, 1 << 18, other),
            "event-other": event_on_other,
            "kernel-null-stream": lambda: empty.launch(Stream.borrow(0), 1, 1),
            "graph-other": lambda: [exe.launch(other) for _ in range(10)] and None,
        }
        before = _measure(h, exe, ops, k)
        triggers[trigger]()
        ctx.device.synchronize()
        after = _measure(h, exe, ops, k)
        exe.destroy()
        graph.destroy()
        session.release()
        other.destroy()
        h.close()
    return {"before": before, "after": after}


MARK = r"""
extern "C" __global__ void probe_mark(unsigned int* marks, unsigned int step,
                                      unsigned int stride) {
    marks[step * stride] = step + 1u;
}
"""


def _per_kernel(h: Harness, launches: list[Any], k: int) -> float:
    """The stream path of prepared launches: device µs per kernel (mean of the samples)."""
    def stream_path(s: Stream) -> None:
        for launch in launches:
            launch.enqueue(s)
    return summarize(h.device_samples(stream_path, k).samples).mean_s / k * 1e6


def probe_placement(k: int, variant: str) -> dict[str, Any]:
    """Stream-path device time per kernel for a chain whose marks live in each of several
    buffers (one process, settled context): does where the one written line lands move it?
    Also empty kernels (no store) and stores 128 bytes apart (one line per kernel)."""
    with RunContext.open(0) as ctx:
        h = Harness(ctx, BenchSettings(StopRule(min_time_s=0.3, timeout_s=2.0), flush_l2=True))
        path = Path(tempfile.mkdtemp()) / "probe_mark.cu"
        path.write_text(MARK)
        mark = ctx.kernel(path, "probe_mark")
        empty = ctx.kernel("graphcert_runtime.cu", "gc_empty").prepare(1, 1)
        out: dict[str, Any] = {}

        out["empty"] = _per_kernel(h, [empty] * k, k)
        for j in range(6):
            buf = ctx.alloc(4 << 20)
            for stride in (1, 32):
                launches = [mark.prepare(1, 1, buf, np.uint32(i), np.uint32(stride))
                            for i in range(k)]
                out[f"buffer {j} stride {stride}"] = _per_kernel(h, launches, k)
        h.close()
    return out


def probe_codeload(k: int, variant: str) -> dict[str, Any]:
    """Stream-path device time per kernel with the kernel's module loaded several times in
    one process (each load kept, so each lands at a new address), the marks in one buffer:
    does where the code lands move the figure, as much as it moves between processes?"""
    from graphcert.cuda import nvrtc
    from graphcert.cuda.module import Module

    with RunContext.open(0) as ctx:
        h = Harness(ctx, BenchSettings(StopRule(min_time_s=0.3, timeout_s=2.0), flush_l2=True))
        path = Path(tempfile.mkdtemp()) / "probe_mark.cu"
        path.write_text(MARK)
        cubin = nvrtc.build(path, ctx.arch).cubin
        buf = ctx.alloc(4 << 20)
        loads = [Module(cubin, "probe_mark.cu") for _ in range(6)]
        out: dict[str, Any] = {}
        for j, module in enumerate(loads):
            mark = module.kernel("probe_mark")
            launches = [mark.prepare(1, 1, buf, np.uint32(i), np.uint32(1)) for i in range(k)]
            out[f"load {j}"] = _per_kernel(h, launches, k)
        for module in loads:
            module.unload()
        h.close()
    return out


def probe_contexts(k: int, variant: str) -> dict[str, Any]:
    """The stream path per kernel in five fresh primary contexts of one process, one after
    another (the context reset between them): does a new context move the figure as a new
    process does (codeload and placement showed that nothing within one context does)?"""
    from cuda.bindings import driver

    out: dict[str, Any] = {}
    path = Path(tempfile.mkdtemp()) / "probe_mark.cu"
    path.write_text(MARK)
    for j in range(5):
        with RunContext.open(0) as ctx:
            h = Harness(ctx, BenchSettings(StopRule(min_time_s=0.3, timeout_s=2.0),
                                           flush_l2=True))
            mark = ctx.kernel(path, "probe_mark")
            buf = ctx.alloc(4 << 20)
            launches = [mark.prepare(1, 1, buf, np.uint32(i), np.uint32(1)) for i in range(k)]
            out[f"context {j}"] = _per_kernel(h, launches, k)
            h.close()
        _, dev = driver.cuDeviceGet(0)
        driver.cuDevicePrimaryCtxReset(dev)
    return out


MATRIX = {
    "tools": (("ours", "default"), ("nvbench", "default"), ("nvbench", "same-stream"),
              ("nvbench", "no-blocker"), ("ours", "other-stream"), ("ours", "timestamps"),
              ("ours", "default"), ("ours", "settled")),
    "upload": (("ours", "default"), ("ours", "other-stream"), ("ours", "reupload"),
               ("ours", "first-launch-here"), ("ours", "first-launch-other"),
               ("ours", "default")),
}


def run_matrix(kernels: list[int], matrix: str) -> None:
    rows = []
    for k in kernels:
        for tool, variant in MATRIX[matrix]:
            proc = subprocess.run([sys.executable, __file__, "--one", tool, variant, str(k)],
                                  capture_output=True, text=True, timeout=120)
            line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            if proc.returncode or not line:
                print(f"{tool} {variant} k={k} failed: {proc.stderr[-800:]}", flush=True)
                continue
            doc = json.loads(line[-1])
            rows.append((k, tool, variant, doc))
            print(json.dumps({"k": k, "tool": tool, "variant": variant, **doc}), flush=True)
    print(f"\n{'k':>4} {'tool':8} {'variant':13} {'graph µs/node':>14} {'stream µs/kernel':>17}"
          f" {'nvb batch graph':>16}")
    for k, tool, variant, doc in rows:
        g, st = doc["graph"], doc["stream"]
        print(f"{k:4} {tool:8} {variant:13} {g['mean_us']:14.4f} {st['mean_us']:17.4f}"
              f" {g.get('batch_us', float('nan')):16.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", default="16,64,256")
    parser.add_argument("--matrix", choices=sorted(MATRIX), default="tools")
    parser.add_argument("--one", nargs=3, metavar=("TOOL", "VARIANT", "K"))
    args = parser.parse_args()
    if args.one:
        tool, variant, k = args.one
        fn = {"ours": probe_ours, "nvbench": probe_nvbench, "trigger": probe_trigger,
              "placement": probe_placement, "codeload": probe_codeload,
              "contexts": probe_contexts}[tool]
        print(json.dumps(fn(int(k), variant)))
        return
    run_matrix([int(v) for v in args.kernels.split(",")], args.matrix)


if __name__ == "__main__":
    main()
