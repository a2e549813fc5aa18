"""Probe (issue 32, NVTX attribution): can graphcert record tell which NVTX range an eager
kernel was launched in? Loads libcupti, points NVTX_INJECTION64_PATH at it before torch's
first NVTX call, enables MARKER activity, kernel activity and API activity records for the
kernel-launch calls only (cuptiActivityEnableRuntimeApi / ...DriverApi; if that yields none,
the whole RUNTIME and DRIVER kinds), runs eager work in nested torch.cuda.nvtx ranges and a
graph replay, and prints what came back and the join kernel -> launch call -> innermost range.

    python tools/probes/nvtx_probe.py
"""

from __future__ import annotations

import collections
import os
import sys
import time

from cupti import cupti

from graphcert.cupti.library import libcupti_path, load

RECORDS: list[dict[str, object]] = []


def requested() -> tuple[int, int]:
    return 8 * 1024 * 1024, 0


def completed(activities: list[object]) -> None:
    ak = cupti.ActivityKind
    for rec in activities:
        kind = int(rec.kind)  # type: ignore[attr-defined]
        row: dict[str, object] = {"kind": ak(kind).name}
        if kind == int(ak.MARKER):
            oid = rec.object_id  # type: ignore[attr-defined]
            tid = None
            try:
                tid = int(oid.pt.thread_id)
            except Exception as exc:  # noqa: BLE001
                tid = f"? {type(exc).__name__}: {exc}"
            row.update(name=rec.name, id=rec.id, flags=rec.flags_, ts=rec.timestamp,  # type: ignore[attr-defined]
                       domain=rec.domain, object_kind=rec.object_kind, tid=tid)  # type: ignore[attr-defined]
        elif kind in (int(ak.RUNTIME), int(ak.DRIVER)):
            row.update(cbid=rec.cbid, start=rec.start, end=rec.end,  # type: ignore[attr-defined]
                       tid=rec.thread_id, corr=rec.correlation_id)  # type: ignore[attr-defined]
        elif kind == int(ak.CONCURRENT_KERNEL):
            row.update(name=str(rec.name)[:50], corr=rec.correlation_id,  # type: ignore[attr-defined]
                       graph=rec.graph_id, start=rec.start)  # type: ignore[attr-defined]
        RECORDS.append(row)


def launch_cbids(enum: type) -> list[tuple[str, int]]:
    return [(n, int(getattr(enum, n))) for n in dir(enum)
            if ("LaunchKernel" in n or "LaunchCooperativeKernel" in n) and not n.startswith("__")]


def main() -> None:
    load()
    cupti.activity_register_callbacks(requested, completed)  # loads libcupti (import does not)
    path = libcupti_path()
    print("libcupti:", path, "| NVTX_INJECTION64_PATH before:",
          os.environ.get("NVTX_INJECTION64_PATH"), flush=True)
    if path:
        os.environ.setdefault("NVTX_INJECTION64_PATH", path)
    import torch

    x = torch.randn(512, 512, device="cuda")
    torch.cuda.synchronize()
    for k in ("MARKER", "CONCURRENT_KERNEL"):
        cupti.activity_enable(getattr(cupti.ActivityKind, k))
    mode = sys.argv[1] if len(sys.argv) > 1 else "per-api"
    rt, dr = launch_cbids(cupti.RuntimeApiTraceCbid), launch_cbids(cupti.DriverApiTraceCbid)
    print("runtime launch cbids:", rt, "\ndriver launch cbids:", dr, flush=True)
    if mode == "per-api":
        for name, cbid in rt:
            try:
                cupti.activity_enable_runtime_api(cbid, 1)
            except Exception as exc:  # noqa: BLE001
                print("enable_runtime_api", name, "refused:", exc)
        for name, cbid in dr:
            try:
                cupti.activity_enable_driver_api(cbid, 1)
            except Exception as exc:  # noqa: BLE001
                print("enable_driver_api", name, "refused:", exc)
    else:
        cupti.activity_enable(cupti.ActivityKind.RUNTIME)
        cupti.activity_enable(cupti.ActivityKind.DRIVER)
    t0 = time.perf_counter()
    with torch.cuda.nvtx.range("outer"):
        with torch.cuda.nvtx.range("inner"):
            y = x @ x
        z = torch.relu(x)
    w = x + 1
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.sin(x)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        v = torch.sin(x)
    with torch.cuda.nvtx.range("replays"):
        for _ in range(3):
            g.replay()
    torch.cuda.synchronize()
    print(f"body {time.perf_counter() - t0:.3f} s", flush=True)
    cupti.activity_flush_all(1)
    del y, z, w, v
    by_kind = collections.Counter(str(r["kind"]) for r in RECORDS)
    print("records by kind:", dict(by_kind))
    for r in RECORDS:
        if r["kind"] in ("MARKER", "CONCURRENT_KERNEL"):
            print(r)
    api = {r["corr"]: r for r in RECORDS if r["kind"] in ("RUNTIME", "DRIVER")}
    print("API records (first 12):", [(r["kind"], r["cbid"], r["corr"]) for r in api.values()][:12])
    starts = {r["id"]: r for r in RECORDS if r["kind"] == "MARKER" and r["name"]}
    ends = {r["id"]: r for r in RECORDS if r["kind"] == "MARKER" and not r["name"]}
    ranges = [(s["name"], s["ts"], ends[i]["ts"], s["tid"]) for i, s in starts.items() if i in ends]
    print("ranges:", ranges)
    for k in (r for r in RECORDS if r["kind"] == "CONCURRENT_KERNEL"):
        call = api.get(k["corr"])
        inside = [n for n, a, b, t in ranges
                  if call and a <= call["start"] <= b and t == call["tid"]]
        print(f"kernel {k['name'][:40]:40} graph {k['graph']} corr {k['corr']} -> call "
              f"{'none' if call is None else (call['kind'], call['cbid'])} -> ranges {inside}")


if __name__ == "__main__":
    main()
