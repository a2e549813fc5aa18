"""Fidelity: graphcert's device times against NVIDIA's nvbench (cuda-bench 0.3.0), same run.

Times the `chain` workload's empty kernels with both tools, in one process, on one stream,
and prints for device time per kernel on a queued stream and per node of a graph launch each
tool's figure and their ratio (target: within 5%). graphcert measures twice, before and after
nvbench, so drift within the run shows. Needs a GPU and the cuda-bench wheel:

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
            before = bench_size(session, h, 1)
            theirs = nvbench_times(session, h.stream)
            after = bench_size(session, h, 1)
        finally:
            session.release()
            h.close()
    print(f"\nchain with {k} empty kernels on {ctx.device.info.name}, one stream, cold, L2 "
          f"flushed; device time per kernel (stream) and per node (graph)")
    print(f"{'path':8} {'graphcert before':>17} {'graphcert after':>16} {'nvbench':>11}"
          f" {'ratio before':>13} {'ratio after':>12}")
    worst = 0.0
    for way in ("stream", "graph"):
        n = theirs[way]["mean_s"]
        timings = [t for row in (before, after) if (t := row.way(way).get("device"))]
        if len(timings) != 2:
            raise SystemExit(f"{way}: the queued (device) figure is unavailable")
        ours = [t.mean_s for t in timings]
        ratios = [v / n for v in ours]
        worst = max([worst, *(abs(r - 1) for r in ratios)])
        print(f"{way:8} {ours[0] / k * 1e6:14.4f} µs {ours[1] / k * 1e6:13.4f} µs"
              f" {n / k * 1e6:8.4f} µs {ratios[0]:13.4f} {ratios[1]:12.4f}"
              f"   (noise {timings[0].noise:.2%}, "
              f"{timings[1].noise:.2%} vs {theirs[way]['noise']:.2%})")
    print(f"largest disagreement: {worst:.2%} (target within 5%)")


if __name__ == "__main__":
    main()
