"""graphcert: profile and certify CUDA Graphs.

The public Python API; importing graphcert imports nothing heavy (each function imports what
it needs when called). Every bad argument of every function here raises
graphcert.errors.InputError (one line), checked at this edge (graphcert.apicheck):

    import graphcert
    snap = graphcert.snapshot(g)                 # torch CUDAGraph(keep_graph=True), CuPy Graph,
                                                 # cuda.core GraphBuilder, CUgraph or address
    graphcert.save(snap, "decode-b8.json")
    d = graphcert.diff(graphcert.load("decode-b8.json"), snap)

    decode = graphcert.step(model_step, make_batch, framework="torch", rtol=1e-2, atol=1e-2)
    # graphcert verify file.py:decode --classes vllm:64   (or the pytest fixture)
"""

from __future__ import annotations

import os
import sys


def _command_line() -> bool:
    """Whether this process is graphcert's command line (`python -m graphcert`, the
    `graphcert` script), known from how Python was started, not guessed from a name."""
    argv = getattr(sys, "orig_argv", ())
    module = argv[argv.index("-m") + 1] if "-m" in argv[:-1] else None
    return module == "graphcert" or os.path.basename(sys.argv[0] or "") == "graphcert"


def _interrupted_early(signum: int, frame: object) -> None:
    """Ctrl-C before graphcert._interrupt's handler is in (its first moments): the same one
    line and exit 130, with nothing yet to clean up."""
    os.write(2, b"graphcert: interrupted\n")
    os._exit(130)


# The command line's Ctrl-C handler goes in before anything else of graphcert runs, here, with
# no module to load first (_signal is built in): this package is imported before __main__,
# and a SIGINT while it or graphcert._interrupt loads would otherwise be Python's
# KeyboardInterrupt traceback. __main__ then installs the handler for the whole run. A
# program that imports graphcert keeps its own handler.
if _command_line():
    __import__("_signal").signal(2, _interrupted_early)  # 2: SIGINT, on every platform

from graphcert._version import __version__  # noqa: E402

# Not `from typing import ...`: typing costs ~10 ms, and `python -m graphcert` runs this file
# before __main__ can turn Ctrl-C into one line (so start-up stays short and interruptible).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import numpy as np

    from graphcert.frameworks.padding import PadSpec
    from graphcert.frameworks.step import Step
    from graphcert.kinds.profile.result import ProfileResult
    from graphcert.kinds.topology.result import VerifyResult
    from graphcert.model import GraphSnapshot, SnapshotDiff
    from graphcert.run.record import RecordSession

__all__ = ["__version__", "demangle", "diff", "format_param", "load", "profile",
           "profile_graph", "record", "save", "snapshot", "step", "verify_step"]

if TYPE_CHECKING:
    PathLike = str | os.PathLike[str]


def snapshot(obj: object, name: str | None = None) -> GraphSnapshot:
    """Read a CUDA graph made elsewhere into a GraphSnapshot (nodes, edges, fingerprints).

    Takes a `torch.cuda.CUDAGraph` created with `keep_graph=True` (after capture), a
    `cupy.cuda.Graph`, a cuda.core `GraphBuilder` (after `end_building()`) or
    `GraphDefinition`, a cuda.bindings `CUgraph`, or a CUgraph address as an int. The graph is
    read, never changed. `name` is kept in the snapshot's meta. Anything else raises
    `graphcert.errors.InputError` with one line naming its type and the types taken."""
    from graphcert.apicheck import optional_text
    from graphcert.sources import snapshot_of

    return snapshot_of(obj, name=optional_text(name, "name"))


def demangle(name: str) -> str:
    """A kernel's name as people read it: the C++ name a mangled one (`_ZN2at6native...`)
    stands for, as c++filt prints it; any other name (an `extern "C"` kernel such as cuBLAS's
    `nvjet_*`, or one that does not demangle) comes back as it is. A node's `name` stays the
    raw one, since that is what fingerprints hash and what the driver reports."""
    from graphcert.apicheck import type_name
    from graphcert.errors import InputError
    from graphcert.render.names import demangle as _demangle

    if not isinstance(name, str):
        raise InputError(f"name must be a str, not a {type_name(name)}")
    return _demangle(name)


def format_param(value: object) -> str:
    """A kernel parameter value as inventory, diff and show print it: numbers of 2^32 or more
    (device pointers among them) in hex, smaller ones in decimal. A snapshot keeps the value
    itself (`node.attrs["param_values"]`: ints, which compare and add as numbers); this is
    the one rule for showing one, so a program's output reads as the CLI's does."""
    from graphcert.model.params import format_param as _format

    return _format(value)


def save(snapshot: GraphSnapshot, path: PathLike) -> Path:
    """Write a snapshot as JSON, atomically; returns the path written."""
    from graphcert.apicheck import path_arg, snapshot_arg
    from graphcert.fileio import check_output_file
    from graphcert.model import save_snapshot

    snap = snapshot_arg(snapshot, "snapshot")
    return save_snapshot(check_output_file(path_arg(path, "path"), "snapshot file"), snap)


def load(path: PathLike) -> GraphSnapshot:
    """Read and verify a snapshot file (fingerprints are recomputed); InputError if unusable."""
    from graphcert.apicheck import path_arg
    from graphcert.model import load_snapshot

    return load_snapshot(path_arg(path, "path"))


def diff(a: GraphSnapshot | PathLike, b: GraphSnapshot | PathLike) -> SnapshotDiff:
    """What changed from a to b: nodes added, removed and changed, and whether the topology
    or only the launch shape differs. Each side is a snapshot or a snapshot file's path."""
    from graphcert.apicheck import snapshot_or_path
    from graphcert.model import diff_snapshots, load_snapshot

    sides = [snapshot_or_path(a, "a"), snapshot_or_path(b, "b")]  # both checked before loading
    snaps = [load_snapshot(s) if isinstance(s, os.PathLike) else s for s in sides]
    return diff_snapshots(snaps[0], snaps[1])


def step(fn: Callable[..., object], make_inputs: Callable[[int], object], *,
         framework: str = "torch", rows: Callable[[np.ndarray, int], np.ndarray] | None = None,
         rtol: float = 1e-3, atol: float = 1e-3, name: str | None = None,
         pad_value: PadSpec = 0.0, warmup: int = 3, description: str | None = None,
         poison: PadSpec | None = None) -> Step:
    """Declare a framework step that graphcert captures once per bucket with the framework's
    own capture ("torch": torch.cuda.graph with a private pool, "cupy": stream capture,
    "cuda.core": GraphBuilder), then replays with each sampled batch of n rows padded to the
    bucket and compares with the eager call at n.

    `fn(*inputs)` is the step (cuda.core: `fn(stream, *arrays)`); `make_inputs(n)` returns
    its inputs for batch size n, each batched along dim 0; `rows(output, n)` the part of a
    (numpy) output that belongs to n, by default its first n rows; padded rows hold
    `pad_value` (one number, a tuple with one per input, or a dict {position: number});
    outputs must match within `rtol`/`atol`. `poison` (same forms) is what verify pads with
    to tell whether a failing bucket depends on its padding (default: NaN for floating
    inputs, the real rows repeated for the others). Name the returned object in a module
    and `graphcert verify file.py:NAME --classes vllm:64` takes it, as do capture, inventory
    and bench; in tests use the `graphcert_verify` fixture."""
    from graphcert.apicheck import callable_arg, int_arg, number_arg, optional_text
    from graphcert.frameworks.step import step as declare

    callable_arg(fn, "fn")
    callable_arg(make_inputs, "make_inputs")
    callable_arg(rows, "rows", optional=True)
    for value, what in ((rtol, "rtol"), (atol, "atol")):
        number_arg(value, what)  # pad_value and poison: checked by the declaration
    int_arg(warmup, "warmup", 0)
    optional_text(name, "name")
    optional_text(description, "description")
    return declare(fn, make_inputs, framework=framework, rows=rows, rtol=rtol, atol=atol,
                   name=name, pad_value=pad_value, warmup=warmup, description=description,
                   poison=poison)


def verify_step(step: Step, classes: str = "vllm:64", *, samples: int = 4, seed: int = 0,
                ref: str | None = None, device: int = 0) -> VerifyResult:
    """Verify a step over `classes` (a range, a bucket list or a preset) in this process, on
    GPU number `device`: the typed VerifyResult with its verdict. FrameworkMissing (an
    InputError) when its framework cannot run here."""
    from graphcert.apicheck import int_arg, optional_text, text_arg, type_name
    from graphcert.buckets import parse_buckets
    from graphcert.errors import InputError
    from graphcert.frameworks.step import Step as StepType

    if not isinstance(step, StepType):
        raise InputError(f"step must be a graphcert.step(...) declaration, not a "
                         f"{type_name(step)}")
    text_arg(classes, "classes")
    int_arg(samples, "samples", 1)
    int_arg(seed, "seed", 0)
    optional_text(ref, "ref")
    int_arg(device, "device", 0)
    buckets = parse_buckets(classes)
    from graphcert.run.steps import verify_step as run  # after the checks: it imports numpy

    return run(step, ref or step.name, buckets, samples=samples, seed=seed,
               classes_spec=classes, device=device)


def profile_graph(graph: object, replay: Callable[[], object], replays: int = 200, *,
                  stream: object = None, name: str = "graph") -> ProfileResult:
    """Profile a graph you hold (what `snapshot` takes: a torch CUDAGraph with
    keep_graph=True, CuPy, cuda.core, a CUgraph): `replay()` replays it once (e.g. g.replay),
    on `stream` (a CUstream address, a torch.cuda.Stream or an object with __cuda_stream__;
    None: the legacy default stream). It is replayed `replays` times untraced and as many
    traced (CUPTI); the result holds per node the median, min and max device time and start
    offset, the critical path, the gaps and the tracing overhead, then what a replay saves
    without each of its 16 longest nodes (`what_if`, untraced). `graphcert.profile(...)`
    is the same call. InputError for bad arguments or a graph with no kernel, copy
    or set node; CuptiUnavailable (one line) where CUPTI cannot trace."""
    from graphcert.apicheck import callable_arg, int_arg, text_arg

    callable_arg(replay, "replay")
    int_arg(replays, "replays", 1)
    text_arg(name, "name")
    from graphcert.run.profile import profile_object  # after the checks: it imports CUDA

    return profile_object(graph, replay, replays, stream=stream, label=name)


def profile(graph: object, replay: Callable[[], object], replays: int = 200, *,
            stream: object = None, name: str = "graph") -> ProfileResult:
    """`graphcert.profile(g, replay=g.replay)`: the same as profile_graph (a shorter name
    for it; the pure analysis lives in graphcert.profiling)."""
    return profile_graph(graph, replay, replays, stream=stream, name=name)


def record(out: PathLike | None = None, *, device: int = 0) -> RecordSession:
    """Record the CUDA graphs made and launched inside a `with` block, in this process only
    (`graphcert record -- COMMAND` records every process of a command's tree):

        with graphcert.record() as rec:
            serve()
        rec.result.recorded.steady   # coverage in steady state; rec.result: a RecordResult

    With `out` (a folder) the record certificate and its snapshots are written there on
    exit. CuptiUnavailable (one line) when CUPTI cannot trace here or another profiler
    holds it."""
    import sys

    from graphcert.apicheck import int_arg, path_arg

    int_arg(device, "device", 0)
    folder = None if out is None else path_arg(out, "out")
    from graphcert.fileio import ensure_writable_dir
    from graphcert.options import Options
    from graphcert.run.record import RecordSession

    if folder is not None:
        ensure_writable_dir(folder)
    program = [sys.argv[0] or "python"] if sys.argv else ["python"]
    return RecordSession(program, out_dir=folder, options=Options.from_environ(os.environ),
                         device=device)
