"""Device probe (issue 31): what CUPTI activity tracing adds to a graph replay's device time,
and whether any CUPTI setting lowers it. Prints one line per workload and setting; asserts
nothing. Run on the GPU machine from the repository root (well under 60 s):

  PYTHONPATH=.:/tmp/site:/tmp/cupti python3 tools/probes/profile_overhead_probe.py

In one process, per graph (graphcert's chain at 16 and 1000 kernels, a 4-kernel PyTorch fork):
the replay's device time (CUDA events around each launch on the replay stream, median of
REPLAYS after WARMUP) untraced (the first graph: also before CUPTI's callbacks are
registered), then under each setting, then untraced again once every kind
is disabled (does the cost stay with a graph CUPTI has instrumented?). Each line: the median,
its ratio to the first untraced median, the records CUPTI delivered per replay and the extra
device time per record, (traced - untraced) / records. A setting CUPTI refuses prints its
error and is skipped. "new exec" instantiates the graph again while tracing is on (does CUPTI
patch a graph when it is instantiated or when it is launched?).
"""

from __future__ import annotations

import statistics
import sys
import time
import traceback
from collections.abc import Callable
from importlib import metadata
from typing import Any

from cupti import cupti

REPLAYS = 200
WARMUP = 10
K = cupti.ActivityKind
ALL = (K.CONCURRENT_KERNEL, K.MEMCPY, K.MEMSET)
_count = [0]
_registered: list[bool] = []  # the buffer callbacks, registered once (after a first baseline)


def _requested() -> tuple[int, int]:
    return 8 * 1024 * 1024, 0


def _completed(activities: list[object]) -> None:
    _count[0] += len(activities)


def _call(name: str, *args: int) -> str | None:
    """cupti.<name>(*args); None when done, else why not (missing, or CUPTI's error)."""
    fn = getattr(cupti, name, None)
    if fn is None:
        return f"cupti-python has no {name}"
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 (a probe prints what CUPTI says)
        return f"{name}{args} refused: {type(exc).__name__}: {exc}"
    return None


# (label, kinds, calls before enabling, calls after disabling)
SETTINGS: list[tuple[str, tuple[Any, ...], tuple[tuple[str, int], ...],
                     tuple[tuple[str, int], ...]]] = [
    ("CONCURRENT_KERNEL", (K.CONCURRENT_KERNEL,), (), ()),
    ("CONCURRENT_KERNEL+MEMCPY+MEMSET", ALL, (), ()),
    ("+ latency_timestamps(0)", ALL, (("activity_enable_latency_timestamps", 0),), ()),
    ("+ launch_attributes(0)", ALL, (("activity_enable_launch_attributes", 0),), ()),
    ("+ hw_trace(1)", ALL, (("activity_enable_hw_trace", 1),),
     (("activity_enable_hw_trace", 0),)),
]


def _line(what: str, setting: str, med: float, base: float, records: float | None) -> None:
    extra = (f"{(med - base) / records:+8.0f} ns/record ({records:,.1f} records/replay)"
             if records else "")
    print(f"{what:22s} {setting:34s} {med / 1e3:10.2f} us  x{med / base:6.3f}  {extra}",
          flush=True)


def probe(what: str, time_replays: Callable[[], list[float]],
          new_exec: Callable[[], Callable[[], list[float]]] | None = None) -> None:
    """Every setting on one graph (time_replays: REPLAYS replays' device ns)."""
    time_replays()  # warm: the first launches of an exec are slower
    base = statistics.median(time_replays())
    _line(what, "untraced" if _registered else "untraced, CUPTI not loaded yet", base, base,
          None)
    if not _registered:  # the first graph: does CUPTI's mere start-up cost device time?
        cupti.activity_register_callbacks(_requested, _completed)
        _registered.append(True)
        _line(what, "untraced, callbacks registered", statistics.median(time_replays()),
              base, None)
    settings = list(SETTINGS) + ([("CK+MEMCPY+MEMSET, new exec", ALL, (), ())]
                                 if new_exec else [])
    for label, kinds, before, after in settings:
        refused = next((why for name, v in before if (why := _call(name, v))), None)
        if refused:
            print(f"{what:22s} {label:34s} skipped: {refused}", flush=True)
            continue
        enabled = []
        try:
            for kind in kinds:
                why = _call("activity_enable", kind)
                if why:
                    raise RuntimeError(why)
                enabled.append(kind)
            timer = new_exec() if new_exec and "new exec" in label else time_replays
            cupti.activity_flush_all(1)
            _count[0] = 0
            med = statistics.median(timer())
            cupti.activity_flush_all(1)
            _line(what, label, med, base, _count[0] / REPLAYS)
        except Exception as exc:  # noqa: BLE001
            print(f"{what:22s} {label:34s} failed: {type(exc).__name__}: {exc}", flush=True)
        finally:
            for kind in enabled:
                _call("activity_disable", kind)
            for name, v in after:
                why = _call(name, v)
                if why:
                    print(f"{what:22s} {label:34s} undo: {why}", flush=True)
    cupti.activity_flush_all(1)
    _line(what, "untraced after tracing", statistics.median(time_replays()), base, None)


def chain(kernels: int) -> None:
    """graphcert's chain workload at `kernels` kernels, its graph as profile captures it."""
    from graphcert.cuda.context import RunContext
    from graphcert.cuda.stream import Stream
    from graphcert.run.profile_trace import time_replays
    from graphcert.run.session import WorkloadSession
    from graphcert.workloads.registry import load

    ref = f"chain[kernels={kernels}]"
    with RunContext.open(0) as ctx, Stream() as stream:
        session = WorkloadSession(ctx, ref, load(ref).target)
        session.prepare(1 << 16)
        builts = [session.build(stream, 1 << 16)]

        def timer(built: Any) -> Callable[[], list[float]]:
            def run() -> list[float]:
                for _ in range(WARMUP):
                    built.exe.launch(stream)
                return time_replays(lambda: built.exe.launch(stream), stream, REPLAYS)
            return run

        def new_exec() -> Callable[[], list[float]]:
            builts.append(session.build(stream, 1 << 16))
            return timer(builts[-1])

        try:
            probe(ref, timer(builts[0]), new_exec)
        finally:
            for built in builts:
                built.destroy()
            session.release()


def torch_fork() -> None:
    """x -> GEMM -> {relu on a side stream, GEMM} -> add (fp16, 512x512), torch's events."""
    import importlib.util
    from pathlib import Path

    import torch

    # the tests' fork, loaded by path (a wheel's own top-level `tests` could shadow ours)
    path = Path(__file__).resolve().parents[2] / "tests/gpu/torch_fork.py"
    spec = importlib.util.spec_from_file_location("torch_fork", path)
    assert spec is not None and spec.loader is not None
    fork = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fork)
    g, _out = fork.capture_fork(torch, keep_graph=False)

    def run() -> list[float]:
        for _ in range(WARMUP):
            g.replay()
        pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                 for _ in range(REPLAYS)]
        for before, after in pairs:
            before.record()
            g.replay()
            after.record()
        torch.cuda.synchronize()
        return [before.elapsed_time(after) * 1e6 for before, after in pairs]

    probe("torch fork", run)


def converge_records() -> None:
    """What CUPTI reports for converge's WHILE body (3 kernels a round): per (graph_id, high
    32 bits of graph_node_id, low 32 bits, same correlation as the top level) the count, over
    5 replays with graphcert's Activity (it registers its own buffer callbacks)."""
    from collections import Counter

    from graphcert.cuda.context import RunContext
    from graphcert.cuda.stream import Stream
    from graphcert.cupti.activity import Activity
    from graphcert.run.session import WorkloadSession
    from graphcert.workloads.registry import load

    with RunContext.open(0) as ctx, Stream() as stream:
        session = WorkloadSession(ctx, "converge", load("converge").target)
        session.prepare(1024)
        built = session.build(stream, 1024)
        try:
            with Activity() as act:
                for _ in range(5):
                    built.exe.launch(stream)
                stream.synchronize()
        finally:
            built.destroy()
            session.release()
    recs = [r for r in act.records if r.in_graph]
    top = {r.correlation_id for r in recs if r.name == "cv_init"}
    seen = Counter((r.graph_id, r.graph_node_id >> 32, r.graph_node_id & 0xFFFFFFFF, r.name,
                    r.correlation_id in top) for r in recs)
    print(f"converge: {len(recs)} graph records in 5 replays ({len(act.records)} in all)")
    for (gid, high, low, name, same), count in sorted(seen.items()):
        print(f"  graph_id {gid} high {high:#x} low {low} {name:10s} launch's correlation "
              f"{same}: {count}")


def main() -> None:
    t0 = time.perf_counter()
    print("cupti-python", metadata.version("cupti-python"), "nvidia-cuda-cupti",
          metadata.version("nvidia-cuda-cupti"), f"replays {REPLAYS} (median), warmup {WARMUP}",
          flush=True)
    for step in (lambda: chain(16), lambda: chain(1000), torch_fork, converge_records):
        try:
            step()
        except Exception:  # noqa: BLE001 (one graph's failure leaves the others' lines)
            traceback.print_exc(limit=3, file=sys.stdout)
    print(f"probe done in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
