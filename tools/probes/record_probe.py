"""Device probe (issue 32): what graphcert's record collector sees of a small PyTorch program,
how CUPTI answers each way of subscribing, and what happens when torch.profiler runs beside
graphcert's recorder. Prints facts; asserts nothing. On the GPU machine:
  python3 tools/probes/record_probe.py
Each case after the first runs in a process of its own (CUPTI allows one subscriber per
process, and which libcupti is loaded first depends on whether torch was imported first).
"""
import subprocess
import sys
import time

CASES = ("collector", "subscribe-bare", "subscribe-v2-first", "subscribe-torch-first",
         "profiler-inside", "profiler-first")


def libcupti() -> str:
    from graphcert.cupti.library import libcupti_path

    return str(libcupti_path())


def try_subscribe(cupti, how: str) -> None:
    from graphcert.cupti.callbacks import holder_name
    from graphcert.cupti.library import status_name

    params = None
    try:
        if how == "v1":
            handle = cupti.subscribe(lambda *a: None, None)
        else:
            params = cupti.SubscriberParams()
            params.struct_size = cupti.SUBSCRIBER_PARAMS_SIZE
            params.subscriber_name = "graphcert probe"
            import ctypes

            raw = bytes((ctypes.c_char * cupti.SUBSCRIBER_PARAMS_SIZE).from_address(params.ptr))
            print("  v2 params bytes", raw.hex())
            handle = cupti.subscribe_v2(lambda *a: None, None, params.ptr)
        print(f"  {how}: ok, libcupti {libcupti()}")
        cupti.unsubscribe(handle)
    except Exception as exc:  # noqa: BLE001
        holder = holder_name(params) if params is not None else ""
        print(f"  {how}: {status_name(exc)} ({exc}) holder {holder!r} libcupti {libcupti()}")


def subscribe_case(case: str) -> None:
    if case == "subscribe-torch-first":
        import torch  # noqa: F401 (loads PyTorch's libcupti first)
    print("  before cupti import, libcupti", libcupti())
    from cupti import cupti

    order = ("v2", "v1", "v2") if case == "subscribe-v2-first" else ("v1", "v2", "v1")
    for how in order:
        try_subscribe(cupti, how)


def tiny_graph(torch, x):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.relu(x @ x)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        torch.relu(x @ x)
    return g


def profiler_case(case: str) -> None:
    """Three graphs replayed 50 times each: A before torch.profiler, B inside it, C after.
    Prints what graphcert got per phase and what the profiler got."""
    import torch

    from graphcert.cupti.record import Recorder
    from graphcert.run.record import graph_reader

    x = torch.randn(128, 128, device="cuda", dtype=torch.float16)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    rec = Recorder(graph_reader(0))
    prof = torch.profiler.profile(activities=acts)
    if case == "profiler-first":
        prof.__enter__()
        print("  profiler started first")
    try:
        rec.__enter__()
        print("  graphcert recorder entered, libcupti", libcupti())
    except Exception as exc:  # noqa: BLE001
        print(f"  graphcert recorder refused: {type(exc).__name__}: {exc}")
        rec = None
    graphs = {name: tiny_graph(torch, x) for name in "ABC"}

    def replay(name: str) -> None:
        for _ in range(50):
            graphs[name].replay()
        torch.cuda.synchronize()

    def attempt(what: str, fn) -> None:
        try:
            fn()
            print(f"  profiler {what}: ok")
        except Exception as exc:  # noqa: BLE001
            print(f"  profiler {what} raised {type(exc).__name__}: {exc}")

    try:
        replay("A")
        if case == "profiler-inside":
            attempt("started inside the recording", prof.__enter__)
        replay("B")
        attempt("stopped", lambda: prof.__exit__(None, None, None))
        try:
            kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
            print(f"  profiler got {len(kernels)} CUDA events, e.g. "
                  f"{sorted({e.name[:40] for e in kernels})[:3]}")
        except Exception as exc:  # noqa: BLE001
            print(f"  profiler events raised {type(exc).__name__}: {exc}")
        replay("C")
    finally:
        if rec is not None:
            rec.close()
    if rec is None:
        return
    r = rec.recording()
    print("  callback errors", rec.errors[:3], "dropped", r.dropped_records)
    for key, inst in enumerate(r.instantiated):
        name = "ABC"[key] if key < 3 else str(key)
        ids = set(inst.graph_ids)
        launches = sum(1 for launch in r.launched if launch.exec_key == inst.exec_key)
        kernels = sum(1 for k in r.kernels if k.graph_id in ids)
        print(f"  graph {name}: launches seen {launches}, graph kernel records {kernels}")
    print("  eager kernel records", sum(1 for k in r.kernels if not k.graph_id))


def collector() -> None:
    """graphcert's collector over a small PyTorch program (torch imported first)."""
    import torch

    from graphcert.cupti.record import Recorder
    from graphcert.recording import analyse
    from graphcert.run.record import graph_reader

    with Recorder(graph_reader(0)) as rec:
        print("  libcupti", libcupti())
        x = torch.randn(128, 128, device="cuda", dtype=torch.float16)
        g = tiny_graph(torch, x)  # no keep_graph: PyTorch frees the source graph at once
        for _ in range(10):
            g.replay()
        torch.relu(x) * 2  # eager, steady state
        torch.cuda.synchronize()
    r = rec.recording()
    print("  callback errors", rec.errors[:5])
    for i in r.instantiated:
        print("  instantiated", i.made.value, "ids", i.graph_ids, "inst_ns", i.instantiate_ns,
              "capture_ns", i.capture_ns, "nodes",
              i.snapshot.node_count if i.snapshot else None, "read_error", i.read_error)
    print("  launches", len(r.launched), "updates", len(r.updated), "destroyed",
          len(r.destroyed))
    graph_k = [k for k in r.kernels if k.graph_id]
    print("  kernels", len(r.kernels), "graph", len(graph_k))
    corr = {k.correlation_id for k in graph_k}
    print("  launch correlation ids matched by graph kernels:",
          sum(launch.correlation_id in corr for launch in r.launched), "of", len(r.launched))
    a = analyse(r)
    print("  steady", a.steady, "eager groups", [e.name[:50] for e in a.steady_eager[:3]])


def run(case: str) -> None:
    if case == "collector":
        collector()
    elif case.startswith("subscribe"):
        subscribe_case(case)
    else:
        profiler_case(case)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        run(sys.argv[1])
        sys.exit(0)
    for name in CASES:
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True,
                              timeout=120, check=False)
        print(f"== {name}: rc {done.returncode}, {time.perf_counter() - t0:.1f} s")
        print(done.stdout.rstrip())
        if done.returncode != 0:
            print(done.stderr.strip()[-1500:])
