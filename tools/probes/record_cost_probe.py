"""Device probe (issue 32): where `graphcert record`'s cost per serving step goes, and what
GRAPH_TRACE activity gives beside kernel activity. Prints facts; asserts nothing.

    PYTHONPATH=.:/tmp/site:/tmp/cupti python3 tools/probes/record_cost_probe.py [STEPS]

Each case runs in a process of its own (CUPTI keeps state after it is disabled, and allows
one subscriber): a serving loop like examples/record/serve_torch.py's (a 4-layer fp16 MLP
captured at batch 8, then per step a device-to-device copy into its static input and one
replay), STEPS steps timed on the host (synchronised at the end). Cases: plain; kernel
activity alone (CONCURRENT_KERNEL); with MEMCPY and MEMSET (graphcert's Activity() kinds);
Activity as the recorder enables it (markers, launch calls); the callback subscriber alone;
the whole Recorder; kernel activity with GRAPH_TRACE (which ids its records carry, and
whether eager kernels still give kernel records); records counted in the callback without
converting them. Each line: microseconds a step, and records delivered.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

CASES = ("plain", "kernel", "kernel+copies", "activity-record", "subscriber", "recorder",
         "graph-trace", "count-only")


def serve(steps: int) -> tuple[float, dict[str, int]]:
    """Seconds of `steps` serving steps after capture, and the graph's CUPTI ids."""
    import torch

    torch.manual_seed(0)
    layers: list[torch.nn.Module] = []
    for _ in range(4):
        layers += [torch.nn.Linear(1024, 1024), torch.nn.GELU()]
    net = torch.nn.Sequential(*layers).cuda().half().eval()
    with torch.inference_mode():
        requests = torch.randn(64, 8, 1024, device="cuda", dtype=torch.float16)
        x = torch.zeros(8, 1024, device="cuda", dtype=torch.float16)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            net(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph(keep_graph=True)
        with torch.cuda.graph(graph):
            net(x)
        if hasattr(graph, "instantiate"):  # keep_graph=True leaves instantiation to us
            graph.instantiate()
        ids: dict[str, int] = {}
        try:
            from cupti import cupti

            ids["graph_id"] = int(cupti.get_graph_id(graph.raw_cuda_graph()))
            ids["exec_id"] = int(cupti.get_graph_exec_id(graph.raw_cuda_graph_exec()))
        except Exception as exc:  # noqa: BLE001 (a probe prints what it could not read)
            ids["ids_error"] = str(exc)[:100]  # type: ignore[assignment]
        for _ in range(10):
            graph.replay()
        net(requests[0])  # one eager forward (kernel records outside the graph)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for step in range(steps):
            x.copy_(requests[step % 64])
            graph.replay()
        torch.cuda.synchronize()
        return time.perf_counter() - t0, ids


def case(name: str, steps: int) -> None:
    if name == "plain":
        s, _ = serve(steps)
        print(json.dumps({"case": name, "us_per_step": s / steps * 1e6}))
        return
    from cupti import cupti

    from graphcert.cupti import activity as act

    counts: dict[str, int] = {}
    graph_ids: set[int] = set()
    if name in ("kernel", "kernel+copies", "graph-trace", "count-only"):
        kinds = {"kernel": ["CONCURRENT_KERNEL"], "count-only": ["CONCURRENT_KERNEL"],
                 "kernel+copies": ["CONCURRENT_KERNEL", "MEMCPY", "MEMSET"],
                 "graph-trace": ["CONCURRENT_KERNEL", "GRAPH_TRACE"]}[name]

        def completed(activities: list[object]) -> None:
            for rec in activities:
                kind = int(getattr(rec, "kind", -1))
                counts[str(kind)] = counts.get(str(kind), 0) + 1
                if name != "count-only":
                    value = act.convert(cupti, rec)
                    gid = int(getattr(rec, "graph_id", 0) or 0)
                    if gid and len(graph_ids) < 8:
                        graph_ids.add(gid)
                    del value

        cupti.activity_register_callbacks(lambda: (8 * 1024 * 1024, 0), completed)
        for k in kinds:
            cupti.activity_enable(getattr(cupti.ActivityKind, k))
        s, ids = serve(steps)
        cupti.activity_flush_all(1)
        for k in kinds:
            cupti.activity_disable(getattr(cupti.ActivityKind, k))
        kind_names = {str(int(getattr(cupti.ActivityKind, k))): k
                      for k in ("CONCURRENT_KERNEL", "MEMCPY", "MEMSET", "GRAPH_TRACE")}
        print(json.dumps({"case": name, "us_per_step": s / steps * 1e6,
                          "records": {kind_names.get(k, k): v for k, v in counts.items()},
                          "record_graph_ids": sorted(graph_ids), **ids}))
        return
    if name == "activity-record":
        with act.Activity(markers=True, launch_calls=True) as a:
            s, _ = serve(steps)
        print(json.dumps({"case": name, "us_per_step": s / steps * 1e6,
                          "records": len(a.records), "calls": len(a.launch_calls)}))
        return
    if name == "subscriber":
        from graphcert.cupti.callbacks import Subscriber

        class Quiet:
            def __getattr__(self, _n: str) -> object:
                return lambda *a: None

        with Subscriber(Quiet()):  # type: ignore[arg-type]
            s, _ = serve(steps)
        print(json.dumps({"case": name, "us_per_step": s / steps * 1e6}))
        return
    from graphcert.cupti.record import Recorder

    with Recorder(None) as r:
        s, _ = serve(steps)
    rec = r.recording()
    print(json.dumps({"case": name, "us_per_step": s / steps * 1e6,
                      "kernels": len(rec.kernels), "launched": len(rec.launched)}))


def main() -> None:
    if len(sys.argv) > 2:
        case(sys.argv[2], int(sys.argv[1]))
        return
    steps = sys.argv[1] if len(sys.argv) > 1 else "20000"
    for name in CASES:
        done = subprocess.run([sys.executable, __file__, steps, name], capture_output=True,
                              text=True, check=False, timeout=180)
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
        print(lines[-1] if lines else f"{name}: exit {done.returncode} "
              f"{done.stderr.strip()[-400:]}", flush=True)


if __name__ == "__main__":
    main()
