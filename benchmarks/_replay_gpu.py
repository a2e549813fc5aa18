"""The GPU half of benchmarks/replay_methods.py: one job in one (child) process, its samples
returned as a JSON-able dict. Jobs: "plain" (every untraced row, then GRAPH_TRACE's, which
turns CUPTI on last), "kernel" (kernel tracing's rows, after an untraced held baseline),
"flush" (the L2 flush experiment, no CUPTI) and "order" (a sequence of launch methods and
context changes in one process, to see which step moves a graph's device time)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphcert.cuda.context import RunContext
from graphcert.cuda.graph import capture
from graphcert.cuda.stream import Event, Stream, StreamRef
from graphcert.run.benchsettings import BenchSettings
from graphcert.run.harness import Harness, QueueUnavailable

Enqueue = Callable[[Stream], None]
WARMUP = 10
HOT_K = 10


@dataclass
class Subject:
    """A graph to replay: `enqueue(stream)` launches it; `b2b` is the stream back-to-back
    events go on; `harness_stream` the stream a Harness borrows (None: its own);
    `rebuild()` captures and instantiates it again (GRAPH_TRACE needs a graph instantiated
    after it was enabled) and returns the new enqueue; `close()` frees it."""

    label: str
    nodes: int
    enqueue: Enqueue
    b2b: Stream
    harness_stream: Stream | None
    rebuild: Callable[[], Enqueue]
    close: Callable[[], None]


def built_in(ctx: RunContext, ref: str, size: int) -> Subject:
    """A built-in workload captured as profile_built_in captures it, at `size`."""
    from graphcert.buckets import class_of
    from graphcert.run.session import WorkloadSession
    from graphcert.workloads.registry import load

    session = WorkloadSession(ctx, ref, load(ref).native())
    session.prepare(class_of(size))
    stream = Stream()
    built = [session.build(stream, size)]

    def rebuild() -> Enqueue:
        built.append(session.build(stream, size))
        return built[-1].exe.launch

    def close() -> None:
        stream.synchronize()
        for b in built:
            b.destroy()
        session.release()
        stream.destroy()

    nodes = len(built[0].graph.node_handles())
    return Subject(f"{ref} at size {size:,}", nodes, built[0].exe.launch, stream, None,
                   rebuild, close)


def torch_step(ref: str, bucket: int, device: int) -> tuple[Subject, Any]:
    """A framework step captured by its framework at `bucket` (as profile_step captures it),
    launched on the framework's stream; also the adapter (open before any RunContext)."""
    from graphcert.run.steps import StepVerifier, open_adapter
    from graphcert.workloads.registry import load

    step = load(ref).step()
    adapter = open_adapter(step, device)
    verifier = StepVerifier(step, ref, adapter, 2, 0)
    held = [verifier.capture(bucket)[0]]
    nodes = adapter.snapshot(held[0], f"{step.name}-b{bucket}").node_count
    stream = StreamRef(adapter.stream_address())

    def launch_latest(_s: Stream) -> None:
        held[-1].launch()

    def rebuild() -> Enqueue:
        held.append(verifier.capture(bucket)[0])
        return launch_latest

    def close() -> None:
        adapter.synchronize()
        for c in held:
            c.release()

    return Subject(f"{ref} at bucket {bucket}", nodes, launch_latest, stream, stream,
                   rebuild, close), adapter


def back_to_back(enqueue: Enqueue, stream: Stream, count: int) -> list[float]:
    """Seconds between events around each of `count` launches enqueued back to back (profile's
    time_replays)."""
    events = [(Event(), Event()) for _ in range(count)]
    try:
        for before, after in events:
            before.record(stream)
            enqueue(stream)
            after.record(stream)
        events[-1][1].synchronize()
        return [b.elapsed_s(a) for b, a in events]
    finally:
        for pair in events:
            for e in pair:
                e.destroy()


def held(h: Harness, enqueue: Enqueue, count: int) -> tuple[list[float], list[float]]:
    """(device seconds, host seconds of the launch call) of `count` held launches
    (Harness.held_samples: bench's and profile's one definition of a replay's device time)."""
    got = h.held_samples(enqueue, 1, count)
    return [x.device_s for x in got], [x.host_s for x in got]


def hot(h: Harness, enqueue: Enqueue, batch: int, count: int) -> list[float]:
    """Seconds per launch of `batch` launches between two events behind one blocker (bench's
    hot figure with a fixed count), L2 warm."""
    ((start, end),) = h._event_pairs(1)

    def body() -> None:
        for _ in range(batch):
            enqueue(h.stream)

    return [h._held(h.stream, start, end, body, batch + 2) / batch for _ in range(count)]


def _samples(values: list[float], note: str = "") -> dict[str, Any]:
    return {"samples": values, "note": note}


def _harness(ctx: RunContext, subject: Subject, flush: bool) -> Harness:
    return Harness(ctx, BenchSettings(flush_l2=flush, placements=1),
                   stream=subject.harness_stream)


def _warm(subject: Subject, enqueue: Enqueue, stream: Stream) -> None:
    for _ in range(WARMUP):
        enqueue(stream)
    stream.synchronize()


def plain_job(ctx: RunContext, subject: Subject, replays: int) -> dict[str, Any]:
    """Rows 1-5, 3r, 3n, 3s and 10a untraced (CUPTI never enabled before them), then 6 and 7
    with GRAPH_TRACE on and the graph instantiated again inside it. Row 3 comes before the
    flushing harness exists (its stream, blocker and 2 x L2 buffer), 3r after rows 4-5, 3s
    on the stream the back-to-back rows used: where they differ, the state moved."""
    from graphcert.cupti.activity import Activity

    rows: dict[str, Any] = {}
    _warm(subject, subject.enqueue, subject.b2b)
    rows["1"] = _samples(back_to_back(subject.enqueue, subject.b2b, replays))
    h = _harness(ctx, subject, False)
    opened = [h]
    try:
        rows["2"] = _samples(back_to_back(subject.enqueue, subject.b2b, replays),
                             f"{h.settled_launches} settling launches")
        dev, host = held(h, subject.enqueue, replays)
        rows["3"], rows["10a"] = _samples(dev), _samples(host)
        hf = _harness(ctx, subject, True)
        opened.append(hf)
        rows["4"] = _samples(held(hf, subject.enqueue, replays)[0])
        k = h.hot_batch(subject.nodes)
        for key, batch in (("5", k), ("5b", HOT_K)):
            try:
                rows[key] = _samples(hot(h, subject.enqueue, batch, max(replays // batch, 20)),
                                     f"K={batch}")
            except QueueUnavailable as exc:
                rows[key] = {"skipped": str(exc)[:120]}
                h.stream.synchronize()
        rows["3r"] = _samples(held(h, subject.enqueue, replays)[0])
        # The same graph instantiated again and first launched only now, in the settled
        # context: an executable first launched before the context settled was seen to stay
        # slower after it (H200, chain[kernels=1000]: 774 against 597 µs a replay).
        fresh = subject.rebuild()
        _warm(subject, fresh, h.stream)
        rows["3n"] = _samples(held(h, fresh, replays)[0])
        if subject.harness_stream is None:
            hs = Harness(ctx, BenchSettings(flush_l2=False, placements=1),
                         stream=StreamRef(subject.b2b.address))
            opened.append(hs)
            rows["3s"] = _samples(held(hs, subject.enqueue, replays)[0])
        else:
            rows["3s"] = {"skipped": "row 3 already holds the framework's stream"}
        with Activity(graph_trace=True, kernels=False, copies=False) as act:  # as --span
            again = subject.rebuild()
            _warm(subject, again, h.stream)
            rows["7"] = _samples(held(h, again, replays)[0])
        launches = sorted(act.graph_launches, key=lambda r: r.start_ns)[WARMUP:]
        rows["6"] = (_samples([(r.end_ns - r.start_ns) * 1e-9 for r in launches],
                              f"{len(act.graph_launches)} launch records")
                     if launches else {"skipped": "GRAPH_TRACE gave no launch records"})
    finally:
        for one in reversed(opened):
            one.close()
    return rows


def kernel_job(ctx: RunContext, subject: Subject, replays: int) -> dict[str, Any]:
    """Row 3k (row 3's method in a process that ran nothing before it: no back-to-back
    launches, no flushing harness), then rows 8, 9 and 10b with kernel tracing on
    (profile's Activity() kinds), the graph instantiated before it as profile's."""
    from _replay_table import launch_spans

    from graphcert.cupti.activity import Activity

    rows: dict[str, Any] = {}
    h = _harness(ctx, subject, False)
    try:
        _warm(subject, subject.enqueue, h.stream)
        base = held(h, subject.enqueue, replays)[0]
        with Activity() as act:
            _warm(subject, subject.enqueue, h.stream)
            dev, host = held(h, subject.enqueue, replays)
        recs = [(r.correlation_id, r.start_ns, r.end_ns) for r in act.records if r.in_graph]
        spans, per_launch = launch_spans(recs, skip_first=WARMUP)
        rows["8"] = (_samples(spans, f"{per_launch} records a launch, {act.dropped} dropped")
                     if spans else {"skipped": "no kernel records in a graph"})
        rows["9"], rows["10b"] = _samples(dev), _samples(host)
        rows["3k"] = _samples(base)
    finally:
        h.close()
    return rows


def empty_graph(ctx: RunContext, stream: Stream, nodes: int) -> Subject:
    """A chain of `nodes` launches of graphcert_runtime.cu's gc_empty (touches no memory),
    captured on `stream`."""
    empty = ctx.kernel("graphcert_runtime.cu", "gc_empty").prepare(1, 1)

    def record() -> None:
        for _ in range(nodes):
            empty.enqueue(stream)

    graph = capture(stream, record)
    exe = graph.instantiate()
    exe.upload(stream)
    stream.synchronize()

    def close() -> None:
        exe.destroy()
        graph.destroy()

    return Subject(f"gc_empty x{nodes}", nodes, exe.launch, stream, None,
                   lambda: exe.launch, close)


def flush_job(ctx: RunContext, replays: int, node_counts: tuple[int, ...]
              ) -> list[dict[str, Any]]:
    """Each graph (empty kernels and chain's store kernels at each node count) held with L2
    warm and flushed, alternately sample by sample so drift moves both alike."""
    out: list[dict[str, Any]] = []
    with Stream() as stream:
        subjects = [empty_graph(ctx, stream, n) for n in node_counts]
        subjects += [built_in(ctx, f"chain[kernels={n}]", 1) for n in node_counts]
        h, hf = Harness(ctx, BenchSettings(flush_l2=False)), Harness(
            ctx, BenchSettings(flush_l2=True))
        try:
            for subject in subjects:
                _warm(subject, subject.enqueue, h.stream)
                warm: list[float] = []
                flushed: list[float] = []
                for _ in range(replays):
                    warm += held(h, subject.enqueue, 1)[0]
                    flushed += held(hf, subject.enqueue, 1)[0]
                out.append({"label": subject.label, "nodes": subject.nodes,
                            "warm": _samples(warm), "flushed": _samples(flushed)})
        finally:
            hf.close()
            h.close()
            for subject in reversed(subjects):
                subject.close()
    return out


def order_job(ctx: RunContext, subject: Subject, order: str, replays: int
              ) -> list[tuple[str, list[float]]]:
    """The steps of `order` (ORDER_STEPS' letters) in turn, in this process; each timing
    step's samples (B, b, H; the others give none). H and b before any N or U open an
    unsettled harness first."""
    out: list[tuple[str, list[float]]] = []
    opened: list[Harness] = []
    enqueue = subject.enqueue
    try:
        for step in order:
            if step in "NU" or (step in "Hb" and not opened):
                opened.append(Harness(ctx, BenchSettings(flush_l2=False, placements=1,
                                                         settle=step == "N"),
                                      stream=subject.harness_stream))
            if step == "R":
                enqueue = subject.rebuild()
            elif step == "B":
                out.append((step, back_to_back(enqueue, subject.b2b, replays)))
            elif step == "b":
                out.append((step, back_to_back(enqueue, opened[-1].stream, replays)))
            elif step == "H":
                out.append((step, held(opened[-1], enqueue, replays)[0]))
    finally:
        for h in reversed(opened):
            h.close()
    return out


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """One job (see the module's docstring) in this process; what it measured."""
    kind, replays, device = str(job["job"]), int(job["replays"]), int(job.get("device", 0))
    t0 = time.perf_counter()
    if kind == "flush":
        with RunContext.open(device) as ctx:
            cases = flush_job(ctx, replays, tuple(job["nodes"]))
        return {"flush": cases, "wall_s": time.perf_counter() - t0}
    adapter = None
    if job.get("step"):
        subject, adapter = torch_step(str(job["step"]), int(job["size"]), device)
    ctx = RunContext.open(device)
    try:
        if adapter is None:
            subject = built_in(ctx, str(job["workload"]), int(job["size"]))
        try:
            if kind == "order":
                return {"label": subject.label, "order": order_job(
                    ctx, subject, str(job["order"]), replays)}
            rows = (plain_job if kind == "plain" else kernel_job)(ctx, subject, replays)
        finally:
            subject.close()
    finally:
        ctx.close()
    return {"label": subject.label, "nodes": subject.nodes, "rows": rows,
            "wall_s": time.perf_counter() - t0}
