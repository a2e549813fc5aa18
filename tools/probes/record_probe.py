"""Device probe (issue 32): what graphcert's record collector sees of a small PyTorch program
(instantiations with their snapshots, launches, kernel records, whether the launches'
correlation ids match the graph kernels'). Prints facts; asserts nothing. On the GPU machine:
  python3 tools/probes/record_probe.py
"""
import torch

from graphcert.cupti.record import Recorder
from graphcert.recording import analyse
from graphcert.run.record import graph_reader

with Recorder(graph_reader(0)) as rec:
    x = torch.randn(128, 128, device="cuda", dtype=torch.float16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        y = torch.relu(x @ x) + 1
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()  # no keep_graph: PyTorch frees the source graph at once
    with torch.cuda.graph(g):
        y = torch.relu(x @ x) + 1
    for _ in range(10):
        g.replay()
    z = torch.relu(x) * 2  # eager, steady state
    torch.cuda.synchronize()
r = rec.recording()
print("callback errors", rec.errors[:5])
for i in r.instantiated:
    print("instantiated", i.made.value, "ids", i.graph_ids, "inst_ns", i.instantiate_ns,
          "capture_ns", i.capture_ns, "nodes", i.snapshot.node_count if i.snapshot else None,
          "read_error", i.read_error)
print("launches", len(r.launched), "updates", len(r.updated), "destroyed", len(r.destroyed))
graph_k = [k for k in r.kernels if k.graph_id]
print("kernels", len(r.kernels), "graph", len(graph_k),
      "graph_ids", sorted({k.graph_id for k in graph_k}))
corr = {k.correlation_id for k in graph_k}
print("launch correlation ids matched by graph kernels:",
      sum(launch.correlation_id in corr for launch in r.launched), "of", len(r.launched))
a = analyse(r)
print("steady", a.steady, "eager groups", a.steady_eager[:3])
print("rows", [(g.launches, g.device_ns_median) for g in a.graphs])
