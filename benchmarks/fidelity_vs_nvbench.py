"""Fidelity: graphcert's device times against NVIDIA's nvbench (cuda-bench 0.3.0), same run.

Times the `chain` workload's empty kernels with both tools, in one process, on one stream,
and prints for device time per kernel on a queued stream and per node of a graph launch each
tool's figure and their ratio (issue 30: within 1%). The tools take turns: graphcert,
nvbench, graphcert. The nvbench figure is compared with the mean of the two graphcert
figures either side of it, so a drift of the device within the run (1.5% at 16 kernels on an
H100) cancels to first order instead of being read as disagreement; every figure is printed.
`--rounds N` asks for more nvbench runs between graphcert's, but cuda.bench 0.3.0 runs its
benchmarks once a process ("Benchmarks were already executed" on the second run, on an H100
on 2026-11-27): the script then keeps the rounds it has and says so. Needs a GPU and the
cuda-bench wheel:

    python benchmarks/fidelity_vs_nvbench.py [--kernels 64]

graphcert's harness first moves the context into its several-streams state (NOTES.md), so
both tools measure in the state a real application runs in.
"""

from __future__ import annotations

import argparse
import json
import statistics
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


class Nvbench:
    """nvbench's stream and graph benchmarks of the session's workload, registered once
    (cuda.bench refuses a registration after a run) and run once per round; each round
    captures and uploads its own graph on `stream`."""

    def __init__(self, session: WorkloadSession, stream: Stream) -> None:
        import cuda.bench as nvb

        self._nvb, self._session, self._stream = nvb, session, stream
        self._now: dict[str, Any] = {}

        def on(launch: Any) -> Stream:
            return Stream.borrow(launch.get_stream().__cuda_stream__()[1])

        def stream_path(state: Any) -> None:
            state.set_stream(self._stream)
            ops = self._now["ops"]

            def run(launch: Any) -> None:
                st = on(launch)
                for op in ops:
                    op(st)
            state.exec(run)

        def graph_path(state: Any) -> None:
            state.set_stream(self._stream)
            exe = self._now["exe"]
            state.exec(lambda launch: exe.launch(on(launch)))

        nvb.register(stream_path).set_name("stream")
        nvb.register(graph_path).set_name("graph")

    def times(self) -> dict[str, dict[str, float]]:
        """One run: nvbench's cold GPU time (mean, relative stdev) of each path."""
        session, stream = self._session, self._stream
        with oplog.recording() as ops:
            session.run_eager(stream, 1)
        graph = session.record_graph(stream, 1)
        exe = graph.instantiate()
        exe.upload(stream)
        stream.synchronize()
        self._now = {"ops": ops, "exe": exe}
        try:
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "nvbench.json"
                self._nvb.run_all_benchmarks(["fidelity", "--devices",
                                              str(session.ctx.device.index), "--json", str(out),
                                              "-q"])
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


def _device_mean(row: Any, way: str) -> float:
    timing = row.way(way).get("device")
    if not timing:
        raise SystemExit(f"{way}: the queued (device) figure is unavailable")
    return float(timing.mean_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=64)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=1,
                        help="nvbench runs, each between two graphcert runs (cuda.bench 0.3.0 "
                             "runs once a process)")
    args = parser.parse_args()
    k = args.kernels
    ratios: dict[str, list[float]] = {"stream": [], "graph": []}
    with RunContext.open(args.device) as ctx:
        # nvbench's cold measurement clears L2 before every sample; so does bench by default.
        # One placement and no hot figure: nvbench measures one placement, cold only (four
        # placements and the hot batch made this run past 200 s on an H100).
        h = Harness(ctx, BenchSettings(StopRule(), flush_l2=True, placements=1, hot=False))
        session = WorkloadSession(ctx, f"chain[kernels={k}]")
        print(f"chain with {k} empty kernels on {ctx.device.info.name}, one stream, cold, L2 "
              "flushed; device time per kernel (stream) and per node (graph), in µs; "
              "graphcert, nvbench, graphcert, ... in turn", flush=True)
        try:
            nvbench = Nvbench(session, h.stream)
            before = bench_size(session, h, 1)
            for r in range(max(1, args.rounds)):
                try:
                    theirs = nvbench.times()
                except Exception as exc:  # noqa: BLE001 (a second run cuda.bench refuses)
                    print(f"round {r + 1}: nvbench did not run again ({exc}); "
                          f"{r} round(s) kept", flush=True)
                    break
                after = bench_size(session, h, 1)
                for way in ("stream", "graph"):
                    mine = (_device_mean(before, way) + _device_mean(after, way)) / 2
                    n = theirs[way]["mean_s"]
                    ratios[way].append(mine / n)
                    print(f"round {r + 1} {way}: nvbench {n / k * 1e6:.4f} (noise "
                          f"{theirs[way]['noise']:.2%}), graphcert either side "
                          f"{_device_mean(before, way) / k * 1e6:.4f} / "
                          f"{_device_mean(after, way) / k * 1e6:.4f}: ratio {mine / n:.4f}",
                          flush=True)
                before = after
        finally:
            session.release()
            h.close()
    worst = 0.0
    for way, values in ratios.items():
        if values:
            med = statistics.median(values)
            worst = max(worst, abs(med - 1))
            print(f"{way}: median ratio over {len(values)} round(s) {med:.4f} "
                  f"(rounds {', '.join(f'{v:.4f}' for v in values)})")
    print(f"largest disagreement of a median ratio: {worst:.2%} (target within 1%)")


if __name__ == "__main__":
    main()
