"""Graph device time per node: graphcert against the native C++ loop in ONE process.

benchmarks/native_graph_loop.sh compares fresh processes of each tool; on the H200 the two
settle into states 5% apart (NOTES.md). Here the native loop is built as a shared library
(native_graph_loop.cu with -DNATIVE_LIBRARY) and called through ctypes in graphcert's own
process, on the same primary context, alternately with `bench_size` of chain[kernels=N]
(several-streams state, L2 not cleared, one placement, no hot figure: as the shell script).
Both then measure in one driver state, so what is left between them is the harness or
the graph. Each round also runs:
  - the native loop with graphcert's synchronous 4-byte status upload before each hold
    (--reset-status), and graphcert with its hold patched not to upload (this probe only);
  - the native loop timing graphcert's own graph exec (--exec): the same timing on one graph;
  - the native loop's own graph storing into graphcert's chain buffer (--marks).
With --placements K (K >= 2) it runs instead, per round, graphcert over K placements of its
buffers (bench's pad scheme, all in this one context) against the native loop over K
placements of its own buffer made by the same scheme (a pad of pad_bytes(k), then the
buffer): both figures are then medians over placements, as bench reports.
On an H200 (NOTES.md, sixth session) the upload changed nothing, the native loop timing
graphcert's exec read graphcert's figure (0.7931 against 0.7930 us per node) and so did the
native graph over graphcert's buffer (0.7934): the 2% between the two tools' own graphs there
is where each tool's written buffer lies, not the timing. (The native loop on graphcert's
harness stream, --stream, read its own figure: 0.8088 against 0.8091.)
Needs a GPU and nvcc:

    python benchmarks/native_in_process.py [--arch sm_90] [--rounds 3] [--nodes 1000,16]
                                           [--placements K]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphcert.cuda.context import RunContext  # noqa: E402
from graphcert.cuda.memory import DeviceBuffer  # noqa: E402
from graphcert.cuda.stream import BlockingKernel, Stream  # noqa: E402
from graphcert.placements import pad_bytes  # noqa: E402
from graphcert.run.bench import BenchSettings, Harness, bench_size  # noqa: E402
from graphcert.run.session import WorkloadSession  # noqa: E402
from graphcert.stats import StopRule  # noqa: E402


def build(arch: str, out: Path) -> Path:
    """The native loop as a shared library (nvcc links the runtime statically)."""
    lib = out / "libnative_graph_loop.so"
    subprocess.run(["nvcc", "-O2", "-std=c++17", f"-arch={arch}", "-shared", "-Xcompiler",
                    "-fPIC", "-DNATIVE_LIBRARY", str(ROOT / "benchmarks/native_graph_loop.cu"),
                    "-o", str(lib)], check=True)
    return lib


@contextlib.contextmanager
def plain_hold() -> Iterator[None]:
    """graphcert's BlockingKernel.hold without its status upload (the kernel writes its
    status whether released or timed out), as the native loop holds; restored after."""
    original = BlockingKernel.hold

    def hold(self: BlockingKernel, stream: Stream) -> None:
        self._flag_view[0] = 0
        assert self._flag.device_ptr is not None
        self.kernel.launch(stream, 1, 1, np.uint64(self._flag.device_ptr),
                           np.uint64(int(self.timeout_s * 1e9)), self._status)

    BlockingKernel.hold = hold  # type: ignore[method-assign]
    try:
        yield
    finally:
        BlockingKernel.hold = original  # type: ignore[method-assign]


def call_native(lib: ctypes.CDLL, args: list[str]) -> list[dict]:
    """native_main(args) with the C stdout (fd 1) sent to a file: its JSON lines."""
    argv = (ctypes.c_char_p * (len(args) + 1))(b"native", *(a.encode() for a in args))
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 1)
        try:
            rc = lib.native_main(len(args) + 1, argv)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        text = f.read().decode()
    if rc != 0:
        raise SystemExit(f"native_main returned {rc}")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def graphcert_graph(ctx: RunContext, h: Harness, n: int, placements: int = 1
                    ) -> tuple[float, list[float]]:
    """graphcert's graph device time per node (µs) of chain[kernels=n] at size 1: the
    median over `placements` placements, and each placement's."""
    session = WorkloadSession(ctx, f"chain[kernels={n}]")
    try:
        size = bench_size(session, h, 1, placements=placements)
    finally:
        session.release()
    t = size.way("graph").get("device")
    if t is None:
        raise SystemExit("graphcert's queued (device) figure is unavailable")
    spread = (size.placements or {}).get("graph", {}).get("device")
    each = spread.medians_s if spread is not None else (t.median_s,)
    return t.median_s / n * 1e6, [m / n * 1e6 for m in each]


def native_graph(lib: ctypes.CDLL, n: int, samples: int, *more: str) -> float:
    """The native loop's graph device time per node (µs) of an n-node chain."""
    lines = call_native(lib, ["--nodes", str(n), "--samples", str(samples), *more])
    return float(next(d for d in lines if d.get("nodes") == n)["graph_device_us_per_node"])


def print_ratio(n: int, ours: list[float], theirs: list[float]) -> float:
    """One line: both tools' figures per round, their medians and ratio; graphcert's median."""
    mo, mt = statistics.median(ours), statistics.median(theirs)
    print(f"{n:5d} nodes: graphcert " + " ".join(f"{x:.4f}" for x in ours)
          + "  native " + " ".join(f"{x:.4f}" for x in theirs)
          + f"  medians {mo:.4f} / {mt:.4f} us, ratio {mo / mt:.4f} (target within 1%)")
    return mo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--nodes", default="1000,16")
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--placements", type=int, default=1,
                        help="K >= 2: compare medians over K buffer placements instead")
    args = parser.parse_args()
    nodes = [int(x) for x in args.nodes.split(",")]
    out = ROOT / "build" / "native"
    out.mkdir(parents=True, exist_ok=True)
    lib = ctypes.CDLL(str(build(args.arch, out)))
    lib.native_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    ours: dict[int, list[float]] = {n: [] for n in nodes}
    theirs: dict[int, list[float]] = {n: [] for n in nodes}
    reset: dict[int, list[float]] = {n: [] for n in nodes}  # native, status reset per hold
    plain: dict[int, list[float]] = {n: [] for n in nodes}  # graphcert, no status upload
    on_exec: dict[int, list[float]] = {n: [] for n in nodes}  # native timing graphcert's exec
    on_marks: dict[int, list[float]] = {n: [] for n in nodes}  # native, graphcert's buffer
    settings = BenchSettings(StopRule(timeout_s=2.0), flush_l2=False, placements=1, hot=False,
                             new_contexts=False)
    with RunContext.open(args.device) as ctx:
        if args.placements > 1:
            over_placements(ctx, lib, settings, args, nodes)
            return
        h = Harness(ctx, settings)
        try:
            for r in range(args.rounds):
                for n in nodes:
                    def graphcert(n: int = n, into: list[float] = ours[n]) -> None:
                        into.append(graphcert_graph(ctx, h, n)[0])

                    def graphcert_plain(n: int = n) -> None:
                        with plain_hold():
                            graphcert(n, plain[n])

                    def native(n: int = n, into: list[float] = theirs[n],
                               more: tuple[str, ...] = ()) -> None:
                        into.append(native_graph(lib, n, args.samples, *more))

                    def native_reset(n: int = n) -> None:
                        native(n, reset[n], ("--reset-status",))

                    def native_on_our_exec(n: int = n) -> None:
                        session = WorkloadSession(ctx, f"chain[kernels={n}]")
                        try:
                            session.prepare(1)
                            built = session.build(h.stream, 1)
                            try:
                                native(n, on_exec[n], ("--exec", str(int(built.exe.handle))))
                                marks = session.workload._marks.ptr
                                native(n, on_marks[n], ("--marks", str(marks)))
                            finally:
                                built.destroy()
                        finally:
                            session.release()

                    order = [graphcert, native, native_reset, graphcert_plain,
                             native_on_our_exec]
                    for run in order if r % 2 == 0 else order[::-1]:
                        run()
        finally:
            h.close()
        name = ctx.device.info.name
    print(f"graph device time per node on {name}, one process, one primary context, "
          f"{args.rounds} rounds (order alternating), L2 kept, several-streams state")
    for n in nodes:
        mo = print_ratio(n, ours[n], theirs[n])
        for label, runs in (("native with graphcert's status upload", reset),
                            ("graphcert without the status upload", plain),
                            ("native timing graphcert's graph exec", on_exec),
                            ("native graph storing into graphcert's buffer", on_marks)):
            m = statistics.median(runs[n])
            print(f"{'':12} {label} " + " ".join(f"{x:.4f}" for x in runs[n])
                  + f"  median {m:.4f} us, graphcert's ratio to it {mo / m:.4f}")


def over_placements(ctx: RunContext, lib: ctypes.CDLL, settings: BenchSettings,
                    args: argparse.Namespace, nodes: list[int]) -> None:
    """Per round: graphcert over K placements against the native loop over K placements of
    its own buffer (the same pad scheme, this context); prints both medians over
    placements, each placement's figure and their ratio."""
    k_count = args.placements
    ours: dict[int, list[float]] = {n: [] for n in nodes}
    theirs: dict[int, list[float]] = {n: [] for n in nodes}
    ours_each: dict[int, list[float]] = {n: [] for n in nodes}
    theirs_each: dict[int, list[float]] = {n: [] for n in nodes}
    h = Harness(ctx, settings)
    try:
        for r in range(args.rounds):
            for n in nodes:
                def graphcert(n: int = n) -> None:
                    median, each = graphcert_graph(ctx, h, n, k_count)
                    ours[n].append(median)
                    ours_each[n].extend(each)

                def native(n: int = n) -> None:
                    each = []
                    for k in range(k_count):
                        pad = DeviceBuffer(pad_bytes(k)) if k else None
                        marks = DeviceBuffer(4 * n)
                        try:
                            each.append(native_graph(lib, n, args.samples, "--marks",
                                                     str(marks.ptr)))
                        finally:
                            marks.free()
                            if pad is not None:
                                pad.free()
                    theirs[n].append(statistics.median(each))
                    theirs_each[n].extend(each)

                for run in (graphcert, native) if r % 2 == 0 else (native, graphcert):
                    run()
    finally:
        h.close()
    print(f"graph device time per node on {ctx.device.info.name}, one process, one primary "
          f"context, {args.rounds} rounds (order alternating), each the median over "
          f"{k_count} placements (bench's pad scheme), L2 kept, several-streams state")
    for n in nodes:
        print_ratio(n, ours[n], theirs[n])
        for label, each in (("graphcert", ours_each[n]), ("native", theirs_each[n])):
            print(f"{'':12} {label} per placement " + " ".join(f"{x:.4f}" for x in each))


if __name__ == "__main__":
    main()
