"""Fidelity: graphcert's device times against NVIDIA's nvbench (cuda-bench 0.3.0), same run.

Times the `chain` workload's empty kernels with both tools, in one process, on one stream,
and prints for device time per kernel on a queued stream and per node of a graph launch each
tool's figure and their ratio (issue 30: within 1%). The tools take turns: graphcert, nvbench,
graphcert (cuda.bench runs once a process), and the nvbench figure is compared with the mean
of the two graphcert figures either side of it, so a drift of the
device within the run (1.5% at 16 kernels on an H100) cancels to first order instead of being
read as disagreement; every figure is printed. Needs a GPU and the cuda-bench wheel:

    python benchmarks/fidelity_vs_nvbench.py [--kernels 64]

graphcert's harness first moves the context into its several-streams state (NOTES.md), so
both tools measure in the state a real application runs in.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphcert.cuda import oplog  # noqa: E402
from graphcert.cuda.context import RunContext  # noqa: E402
from graphcert.cuda.stream import Stream  # noqa: E402
from graphcert.run.bench import BenchSettings, Harness, bench_size  # noqa: E402
from graphcert.run.session import WorkloadSession  # noqa: E402
from graphcert.stats import StopRule  # noqa: E402


def nvbench_times(session: WorkloadSession, stream: Stream) -> dict[str, dict[str, float]]:
    """nvbench's cold GPU time (mean, relative stdev) of the stream and graph paths, on
    `stream`, where the graph is uploaded."""
    import cuda.bench as nvb

    with oplog.recording() as ops:
        session.run_eager(stream, 1)
    graph = session.record_graph(stream, 1)
    exe = graph.instantiate()
    exe.upload(stream)
    stream.synchronize()

    def on(launch: Any) -> Stream:
        return Stream.borrow(launch.get_stream().__cuda_stream__()[1])

    def stream_path(state: Any) -> None:
        state.set_stream(stream)

        def run(launch: Any) -> None:
            st = on(launch)
            for op in ops:
                op(st)
        state.exec(run)

    def graph_path(state: Any) -> None:
        state.set_stream(stream)
        state.exec(lambda launch: exe.launch(on(launch)))

    nvb.register(stream_path).set_name("stream")
    nvb.register(graph_path).set_name("graph")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "nvbench.json"
            nvb.run_all_benchmarks(["fidelity", "--devices", str(session.ctx.device.index),
                                    "--json", str(out), "-q"])
            doc = json.loads(out.read_text())
    finally:
        stream.synchronize()
        exe.destroy()
        graph.destroy()
    found: dict[str, dict[str, float]] = {}
    for bench_doc in doc["benchmarks"]:
        values = {}
        for summary in bench_doc["states"][0]["summaries"]:
            data = {d["name"]: d for d in summary["data"]}
            if summary["tag"].startswith("nv/cold/") and "value" in data:
                values[summary["tag"]] = float(data["value"]["value"])
        found[bench_doc["name"]] = {"mean_s": values["nv/cold/time/gpu/mean"],
                                    "noise": values["nv/cold/time/gpu/stdev/relative"]}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=64)
    parser.add_argument("--device", type=int, default=0)
    args = parser.parse_args()
    k = args.kernels
    with RunContext.open(args.device) as ctx:
        # nvbench's cold measurement clears L2 before every sample; so does bench by default.
        # One placement and no hot figure: nvbench measures one placement, cold only (four
        # placements and the hot batch made this run past 200 s on an H100).
        h = Harness(ctx, BenchSettings(StopRule(), flush_l2=True, placements=1, hot=False))
        session = WorkloadSession(ctx, f"chain[kernels={k}]")
        try:
            # nvbench runs once a process (cuda.bench refuses to register benchmarks after a
            # run), bracketed by a graphcert run before and after it
            ours = [bench_size(session, h, 1)]
            theirs = [nvbench_times(session, h.stream)]
            ours.append(bench_size(session, h, 1))
        finally:
            session.release()
            h.close()
    print(f"\nchain with {k} empty kernels on {ctx.device.info.name}, one stream, cold, L2 "
          f"flushed; device time per kernel (stream) and per node (graph), in µs; tools in turn")
    worst = 0.0
    for way in ("stream", "graph"):
        timings = [t for row in ours if (t := row.way(way).get("device"))]
        if len(timings) != len(ours):
            raise SystemExit(f"{way}: the queued (device) figure is unavailable")
        mine = [t.mean_s for t in timings]
        print(f"{way}: graphcert " + ", ".join(f"{v / k * 1e6:.4f} (noise {t.noise:.2%})"
                                               for v, t in zip(mine, timings, strict=True)))
        for i, run in enumerate(theirs):
            n = run[way]["mean_s"]
            bracket = (mine[i] + mine[i + 1]) / 2
            ratio = bracket / n
            worst = max(worst, abs(ratio - 1))
            print(f"  nvbench {n / k * 1e6:.4f} (noise {run[way]['noise']:.2%}) against "
                  f"graphcert either side {bracket / k * 1e6:.4f}: ratio {ratio:.4f}")
        drift = max(mine) / min(mine) - 1
        print(f"  graphcert's own figures within the run: {drift:.2%} apart")
    print(f"largest disagreement: {worst:.2%} (target within 1%)")


if __name__ == "__main__":
    main()
