"""`graphcert profile` and `graphcert.profile(...)`: per class, the graph captured as verify
and bench capture it (a built-in's own capture, a framework step's framework capture at its
bucket), read, and replayed held and traced on a timing harness (graphcert.run.profile_trace
says how); the records joined to the graph's nodes and analysed (graphcert.profiling). Runs
on a GPU."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from graphcert.buckets import class_of
from graphcert.cuda.graph import GraphRef
from graphcert.cuda.stream import Stream
from graphcert.cupti.library import load as load_cupti
from graphcert.cupti.library import version as cupti_version
from graphcert.errors import InputError
from graphcert.kinds.profile.result import ProfiledClass, ProfileResult
from graphcert.kinds.profile.span import NODES_MODE, SPAN_MODE
from graphcert.options import Options
from graphcert.run.benchsettings import BenchSettings
from graphcert.run.harness import Harness
from graphcert.run.profile_trace import (
    DEFAULT_REPLAYS,
    UNTRACED_UNHELD,
    ProfileSettings,
    ReadGraph,
    check_replays,
    read_graph,
    trace,
)
from graphcert.run.profile_whatif import attribute

if TYPE_CHECKING:
    from graphcert.cuda.context import RunContext
    from graphcert.frameworks.adapters import Captured
    from graphcert.frameworks.step import Step
    from graphcert.run.runnable import Runnable
    from graphcert.workloads.loaded import LoadedWorkload, NativeWorkload

DEFAULT_SIZE = 1 << 16  # a built-in or user workload without --size/--classes: bench's default
STEP_BUCKETS = "vllm:64"  # a framework step's: graphcert.verify_step's and the pytest plugin's


def harness_settings(settings: ProfileSettings) -> BenchSettings:
    """The timing harness a profile's held replays run on: bench's, one placement, no hot
    figure, L2 as the profile settings say."""
    return BenchSettings(flush_l2=settings.flush_l2, placements=1, hot=False)


def profile_class(read: ReadGraph, launch: Callable[[], None], harness: Harness,
                  settings: ProfileSettings, *, label: str, size: int) -> ProfiledClass:
    """One class's profile: its graph `read`, replayed by `launch` on `harness`'s stream,
    then what each node's absence would save a replay (graphcert.run.profile_whatif); in
    span mode (settings.span) replay spans of executables of its own instead, no per-node
    figures and no what-if (graphcert.run.profile_span)."""
    if settings.span:
        from graphcert.run.profile_span import span_class

        return span_class(read, harness, settings, label=label, size=size)
    traced = trace(read, launch, harness, settings, label=label, size=size)
    assert traced.profile is not None  # trace always gives per-node figures
    if (traced.overhead_reason or "").startswith(UNTRACED_UNHELD):
        return replace(traced, what_if_reason=traced.overhead_reason)
    what_if, reason = attribute(read, harness, traced.profile, settings)
    return replace(traced, what_if=what_if, what_if_reason=reason)


def profile_built_in(ctx: RunContext, ref: str, workload: NativeWorkload, sizes: Sequence[int],
                     settings: ProfileSettings, *, mode: str = "global",
                     capacity_of: Callable[[int], int] = class_of) -> list[ProfiledClass]:
    """Profile a graphcert workload (`workload`: its loaded NativeWorkload) at each size, its
    graph captured per class as verify and bench capture it, timed on bench's harness (the
    context settled as bench settles it)."""
    from graphcert.run.session import WorkloadSession

    session = WorkloadSession(ctx, ref, workload)
    out: list[ProfiledClass] = []
    with Stream() as stream:
        harness = Harness(ctx, harness_settings(settings), stream=stream)
        try:
            for n in sizes:
                capacity = capacity_of(n)
                session.prepare(capacity)
                built = session.build(stream, n, mode)
                try:
                    meta = {"workload": ref, "name": session.name, "capacity": capacity, "n": n,
                            "mode": mode}
                    read = read_graph(built.graph, meta)
                    out.append(profile_class(read, partial(built.exe.launch, stream), harness,
                                             settings, label=f"c{capacity}", size=n))
                finally:
                    built.destroy()
        finally:
            harness.close()
            session.release()
    return out


def profile_step(step: Step, ref: str, sizes: Sequence[int], settings: ProfileSettings, *,
                 device: int = 0,
                 capacity_of: Callable[[int], int] = class_of) -> list[ProfiledClass]:
    """Profile a framework step at the bucket of each size: captured by its framework as
    verify captures it, replayed with the framework's own launch on its stream, timed on
    bench's harness there (the context left as the framework keeps it, as bench leaves it)."""
    from graphcert.run.steps import StepVerifier, open_adapter
    from graphcert.run.steps_bench import stream_harness

    adapter = open_adapter(step, device)
    verifier = StepVerifier(step, ref, adapter, 2, 0)
    out: list[ProfiledClass] = []
    harness, close = stream_harness(adapter.stream_address(), harness_settings(settings),
                                    device)
    try:
        for n in sizes:
            capacity = capacity_of(n)
            captured, _static = verifier.capture(capacity)
            try:
                meta = {"workload": ref, "name": step.name, "capacity": capacity, "n": n,
                        "mode": f"{step.framework} capture"}
                out.append(profile_captured(_graph_object(captured), captured.launch, harness,
                                            settings, label=f"b{capacity}", size=n, meta=meta,
                                            device=device))
            finally:
                captured.release()
    finally:
        close()
    return out


def _graph_object(captured: Captured) -> object:
    """The object graphcert.sources reads a framework's captured graph from (cuda.core's
    builder, PyTorch's CUDAGraph, CuPy's Graph)."""
    # The Captured protocol declares neither: each adapter's own type holds one of them.
    builder = getattr(captured, "builder", None)
    return builder if builder is not None else getattr(captured, "graph")  # noqa: B009


def profile_captured(obj: object, launch: Callable[[], None], harness: Harness,
                     settings: ProfileSettings, *, label: str, size: int,
                     meta: dict[str, object] | None = None,
                     device: int | None = None) -> ProfiledClass:
    """Profile a graph someone else owns (anything graphcert.snapshot takes), replayed by
    `launch` on `harness`'s stream, in the context its framework left current."""
    from graphcert.cuda.handles import current_context, graph_from_address
    from graphcert.sources.detect import graph_ref

    ref = graph_ref(obj)
    with current_context(ref.device if device is None else device):
        read = read_graph(GraphRef(graph_from_address(ref.address)), meta)
        return profile_class(read, launch, harness, settings, label=label, size=size)


def profile_object(obj: object, replay: Callable[[], object], replays: int = DEFAULT_REPLAYS, *,
                   stream: object = None, label: str = "graph") -> ProfileResult:
    """graphcert.profile(...): the profile of a graph the caller holds, replayed by
    `replay()` (e.g. a torch CUDAGraph's g.replay). `stream`: the CUstream the replay runs on
    (an address, or an object with __cuda_stream__); None: the legacy default stream, whose
    events wait for the work of every blocking stream."""
    from graphcert.run.steps_bench import stream_harness
    from graphcert.sources.detect import graph_ref

    settings = ProfileSettings(check_replays(replays))
    if not callable(replay):
        raise InputError(f"replay={replay!r} is not callable",
                         hint="pass the function that replays the graph once, e.g. g.replay")
    t0 = time.perf_counter()
    device = graph_ref(obj).device or 0  # as current_context: device 0 where none is known
    harness, close = stream_harness(_stream_address(stream), harness_settings(settings), device)
    try:
        cls = profile_captured(obj, lambda: _call(replay), harness, settings, label=label,
                               size=0, meta={"name": label})
    finally:
        close()
    return ProfileResult(label, replays, (cls,), cupti_version(),
                         wall_s=time.perf_counter() - t0, flush_l2=settings.flush_l2)


def _call(replay: Callable[[], object]) -> None:
    replay()


def _stream_address(stream: object) -> int:
    if stream is None:
        return 0
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    if hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        return int(stream.cuda_stream)
    if isinstance(stream, int) and not isinstance(stream, bool) and stream >= 0:
        return stream
    raise InputError(f"stream={stream!r} is not a CUDA stream",
                     hint="pass the CUstream address, a torch.cuda.Stream or an object with "
                          "__cuda_stream__, or leave it out for the legacy default stream")


def profile_ref(ctx: RunContext | None, one: Runnable, sizes: Sequence[int],
                settings: ProfileSettings, *, device: int = 0) -> ProfileResult:
    """One workload's profile over `sizes` (a built-in or user workload in `ctx`, a framework
    step in its framework's context): each size captured at its bucket where `sizes` is a
    bucket list, else where the subject captures a size of its own (`unbucketed`)."""
    from graphcert.buckets import Buckets

    t0 = time.perf_counter()
    capacity_of = sizes.capacity_of if isinstance(sizes, Buckets) else one.unbucketed
    classes = one.profile(ctx, sizes, settings, capacity_of=capacity_of, device=device)
    return ProfileResult(one.ref, settings.replays, tuple(classes), cupti_version(),
                         wall_s=time.perf_counter() - t0, flush_l2=settings.flush_l2,
                         mode=SPAN_MODE if settings.span else NODES_MODE)


@dataclass(frozen=True)
class ProfiledRun:
    """One workload's profile and the certificate written for it (None: not written)."""

    ref: str
    result: ProfileResult
    certificate: Path | None = None


def default_sizes(loaded: LoadedWorkload) -> Sequence[int]:
    """What a workload is profiled at when no size is given: a framework step at its usual
    buckets (STEP_BUCKETS, each captured at its bucket), anything else at DEFAULT_SIZE."""
    from graphcert.run.runnable import runnable

    return runnable(loaded).profile_sizes()


def profile_workloads(refs: Sequence[str], sizes: Sequence[int] | None,
                      settings: ProfileSettings, *,
                      device: int = 0, out_dir: Path | None = None, options: Options,
                      on_result: Callable[[ProfiledRun], None] | None = None
                      ) -> list[ProfiledRun]:
    """`graphcert profile`'s one call: load every workload (bad references and replays fail
    before GPU work), profile each over `sizes` (None: each at its `default_sizes`), and with
    `out_dir` write a profile certificate per workload."""
    from graphcert.fileio import ensure_writable_dir
    from graphcert.run import environment
    from graphcert.run.runnable import runnable
    from graphcert.run.session import context_for
    from graphcert.workloads.registry import load

    subjects = [runnable(load(ref)) for ref in refs]
    if out_dir is not None:
        ensure_writable_dir(out_dir)
    load_cupti()
    done: list[ProfiledRun] = []
    with context_for(subjects, device) as ctx:
        env = environment.environment(device, options.git) if out_dir is not None else {}
        for one in subjects:
            result = profile_ref(ctx, one, one.profile_sizes() if sizes is None else sizes,
                                 settings, device=device)
            path = None
            if out_dir is not None:
                path = environment.write(result, out_dir,
                                         environment.subject(one.loaded, "profile"),
                                         env, key=options.signing_key,
                                         uuid_names=options.uuid_names)
            run = ProfiledRun(one.ref, result, path)
            if on_result is not None:
                on_result(run)
            done.append(run)
    return done


__all__ = ["DEFAULT_REPLAYS", "DEFAULT_SIZE", "STEP_BUCKETS", "ProfileSettings", "ProfiledRun",
           "ReadGraph", "check_replays", "default_sizes", "harness_settings", "profile_built_in",
           "profile_captured", "profile_class", "profile_object", "profile_ref", "profile_step",
           "profile_workloads", "read_graph"]
