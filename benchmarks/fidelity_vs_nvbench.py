"""Fidelity: graphcert's device times against NVIDIA's nvbench (cuda-bench 0.3.0), same run.

Times the `chain` workload's empty kernels two ways with both tools and prints, for device
time per kernel on a queued stream and per node of a graph launch, each tool's figure and
their ratio (target: within 5%). Needs a GPU and the cuda-bench wheel:

    python benchmarks/fidelity_vs_nvbench.py [--kernels 64]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphcert.bench import BenchSettings, bench  # noqa: E402
from graphcert.cuda import oplog  # noqa: E402
from graphcert.cuda.context import RunContext  # noqa: E402
from graphcert.cuda.stream import Stream  # noqa: E402
from graphcert.session import WorkloadSession  # noqa: E402
from graphcert.stats import StopRule  # noqa: E402


def nvbench_times(ctx: RunContext, kernels: int) -> dict[str, dict[str, float]]:
    """nvbench's cold GPU time (mean and relative stdev) of the stream and graph paths."""
    import cuda.bench as nvb

    session = WorkloadSession(ctx, f"chain[kernels={kernels}]")
    session.prepare(1)
    with Stream() as s:
        with oplog.recording() as ops:
            session.run_eager(s, 1)
        graph = session.record_graph(s, 1)
        exe = graph.instantiate()
        exe.upload(s)
        s.synchronize()

    def stream_path(state: Any) -> None:
        def launch(launch: Any) -> None:
            st = Stream.borrow(launch.get_stream().__cuda_stream__()[1])
            for op in ops:
                op(st)
        state.exec(launch)

    def graph_path(state: Any) -> None:
        def launch(launch: Any) -> None:
            exe.launch(Stream.borrow(launch.get_stream().__cuda_stream__()[1]))
        state.exec(launch)

    nvb.register(stream_path).set_name("stream")
    nvb.register(graph_path).set_name("graph")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "nvbench.json"
        nvb.run_all_benchmarks(["fidelity", "--devices", str(ctx.device.index), "--json",
                                str(out)])
        doc = json.loads(out.read_text())
    exe.destroy()
    graph.destroy()
    session.release()
    found: dict[str, dict[str, float]] = {}
    for bench_doc in doc["benchmarks"]:
        summaries = {s["tag"]: s for s in bench_doc["states"][0]["summaries"]}

        def value(tag: str, summaries: dict[str, Any] = summaries) -> float:
            data = {d["name"]: d for d in summaries[tag]["data"]}
            return float(data["value"]["value"])

        print(bench_doc["name"], {tag: value(tag) for tag in summaries
                                  if tag.startswith("nv/") and "time" in tag
                                  and "value" in {d["name"] for d in summaries[tag]["data"]}})
        found[bench_doc["name"]] = {
            "mean_s": value("nv/cold/time/gpu/mean"),
            "noise": value("nv/cold/time/gpu/stdev/relative"),
        }
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=64)
    parser.add_argument("--device", type=int, default=0)
    args = parser.parse_args()
    k = args.kernels
    with RunContext.open(args.device) as ctx:
        # nvbench's cold measurement clears L2 before every sample; so does --flush-l2.
        # Each chain kernel stores one word, so the L2 state moves its per-kernel time.
        ours, _ = bench(ctx, f"chain[kernels={k}]", [1], BenchSettings(StopRule(),
                                                                         flush_l2=True))
        theirs = nvbench_times(ctx, k)
    row = ours["sizes"][0]
    print(f"\nchain with {k} empty kernels on {ctx.device.info.name}")
    print(f"{'path':8} {'graphcert mean':>16} {'graphcert median':>17} {'nvbench mean':>14}"
          f" {'ratio (mean)':>13}")
    worst = 0.0
    for way, per in (("stream", "per kernel"), ("graph", "per node")):
        g = row[way]["device"]
        n = theirs[way]
        ratio = g["mean_s"] / n["mean_s"]
        worst = max(worst, abs(ratio - 1))
        print(f"{way:8} {g['mean_s'] / k * 1e6:13.4f} µs {g['median_s'] / k * 1e6:14.4f} µs"
              f" {n['mean_s'] / k * 1e6:11.4f} µs {ratio:13.4f}   ({per}; noise "
              f"{g['noise']:.2%} vs {n['noise']:.2%})")
    print(f"largest disagreement: {worst:.2%} (target within 5%)")


if __name__ == "__main__":
    main()
