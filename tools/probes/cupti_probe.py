"""Device probe (issue 31/32): which CUPTI the driver accepts, what activity records and
callbacks a PyTorch graph gives. Prints facts; asserts nothing. Run on the GPU machine:
  python3 tools/probes/cupti_probe.py
"""
import time
from importlib import metadata

import torch
from cupti import cupti

print("cupti-python", metadata.version("cupti-python"), "nvidia-cuda-cupti",
      metadata.version("nvidia-cuda-cupti"), "torch", torch.__version__)
records: list = []
events: list = []


def requested():
    return 8 * 1024 * 1024, 0


def completed(acts):
    records.extend(acts)


def on_callback(userdata, domain, cbid, data):
    try:
        if domain == cupti.CallbackDomain.RESOURCE:
            rd = data
            gd = None
            try:
                gd = cupti.GraphData.from_ptr(rd.resource_descriptor)
            except Exception as exc:  # noqa: BLE001
                gd = f"no GraphData: {exc}"
            name = cupti.CallbackIdResource(cbid).name
            if isinstance(gd, str):
                events.append((name, gd))
            else:
                events.append((name, dict(graph=gd.graph, graph_exec=gd.graph_exec,
                                          node=gd.node, original_graph=gd.original_graph,
                                          node_type=gd.node_type)))
        elif domain == cupti.CallbackDomain.DRIVER_API:
            name = cupti.get_callback_name(domain, cbid)
            events.append((name, str(data.callback_site), data.correlation_id))
    except Exception as exc:  # noqa: BLE001
        events.append(("callback error", repr(exc)))


kinds = [cupti.ActivityKind.CONCURRENT_KERNEL, cupti.ActivityKind.MEMCPY, cupti.ActivityKind.MEMSET]
t0 = time.perf_counter()
handle = cupti.subscribe(on_callback, None)
cupti.enable_domain(1, handle, cupti.CallbackDomain.RESOURCE)
for cb in ("cuGraphLaunch", "cuGraphInstantiateWithFlags", "cuGraphInstantiateWithParams",
           "cuStreamBeginCapture_v2", "cuStreamEndCapture", "cuGraphExecUpdate_v2",
           "cuLaunchKernel", "cuLaunchKernelEx"):
    cbid = getattr(cupti.DriverApiTraceCbid, cb, None)
    if cbid is None:
        print("no cbid", cb)
        continue
    cupti.enable_callback(1, handle, cupti.CallbackDomain.DRIVER_API, cbid)
cupti.activity_register_callbacks(requested, completed)
for k in kinds:
    cupti.activity_enable(k)
print("setup s", round(time.perf_counter() - t0, 3))

x = torch.randn(256, 256, device="cuda", dtype=torch.float16)
w = torch.randn(256, 256, device="cuda", dtype=torch.float16)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(2):
        y = torch.relu(x @ w) + 1
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph(keep_graph=True)
with torch.cuda.graph(g):
    y = torch.relu(x @ w) + 1
g.instantiate()
for _ in range(20):
    g.replay()
torch.cuda.synchronize()
eager = torch.relu(x @ w) + 1
torch.cuda.synchronize()
cupti.activity_flush_all(1)
print("events", len(events))
seen = {}
for e in events:
    seen.setdefault(e[0], []).append(e)
for name, es in seen.items():
    print(" ", name, len(es), es[:2])
kern = [r for r in records if r.kind == cupti.ActivityKind.CONCURRENT_KERNEL]
print("records", len(records), "kernel", len(kern))
for r in kern[:3] + kern[-6:]:
    print("  ", r.name[:60], "graph_id", r.graph_id, "node", hex(r.graph_node_id),
          "corr", r.correlation_id, "stream", r.stream_id, "dur", r.end - r.start)
print("graph kernel records", sum(1 for r in kern if r.graph_id),
      "eager", sum(1 for r in kern if not r.graph_id))
raw = g.raw_cuda_graph()
print("template graph id", cupti.get_graph_id(raw))
for k in kinds:
    cupti.activity_disable(k)
cupti.unsubscribe(handle)
try:
    h2 = cupti.subscribe(on_callback, None)
    print("second subscribe ok", h2)
    cupti.unsubscribe(h2)
except cupti.cuptiError as exc:
    print("second subscribe:", exc)
cupti.finalize()
print("probe done")
