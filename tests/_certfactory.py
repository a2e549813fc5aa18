"""Synthetic certificates for CPU tests and benchmarks/gate_speed.py.

Every value here is obviously made up (GPU "TEST-GPU", round timings); nothing imitates a
real GPU result. Certificates are built through graphcert's own make_certificate.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from graphcert.cert.document import make_certificate
from graphcert.kinds.topology.result import SampleResult, UpdateOutcome
from graphcert.workloads import registry

CREATED = "2026-01-01T00:00:00Z"


def fake_digest(ref: str) -> str:
    """A stand-in source digest for workload `ref` (tests monkeypatch the registry to it)."""
    return hashlib.sha256(f"synthetic sources of {ref}".encode()).hexdigest()


def synthetic_hash(label: str) -> str:
    """A made-up fingerprint: sha256 of a test label."""
    return hashlib.sha256(f"test {label}".encode()).hexdigest()


def environment(gpu: str = "TEST-GPU") -> dict[str, Any]:
    return {
        "gpu": {"name": gpu, "uuid": "GPU-00000000-test", "compute_capability": "0.0",
                "sm_count": 1, "memory_bytes": 1024, "clock_mhz": 1},
        "driver_version": "0.0.test", "cuda_driver_api": 0,
        "cuda_bindings_version": "0.0.0+test", "nvrtc_version": "0.0.0+test",
        "python": "3.test", "host": "test-host", "platform": "test-platform",
        "git": {"commit": "0" * 40, "dirty": False},
    }


def workload(ref: str = "scan", name: str | None = None, digest: str | None = None,
             kind: str = "topology") -> dict[str, Any]:
    """The workload block; the method digest is this checkout's real one for `kind`."""
    return {"ref": ref, "name": name or ref.split(":")[-1].split("[")[0],
            "source_digest": digest or fake_digest(ref),
            "method_digest": registry.method_digest(kind), "options": {}}


def topology_class(capacity: int, *, topology_hash: str = "t" * 8, shape_hash: str = "s" * 8,
                   kernels: int = 3) -> dict[str, Any]:
    sample = SampleResult(capacity, True, True, UpdateOutcome("success"), True, True,
                          True).to_json()  # the one definition of a sample row
    return {"capacity": capacity, "status": "pass", "reason": None,
            "topology_hash": synthetic_hash(f"topology {topology_hash}"),
            "shape_hash": synthetic_hash(f"shape {shape_hash} {capacity}"),
            "node_count": kernels + 1, "counts": {"kernel": kernels, "memset": 1},
            "predicted": {"kernel": kernels, "memset": 1},
            "padding_waste": {"min": 0, "max": capacity // 2 - 1 if capacity > 1 else 0},
            "samples": [sample, {**sample, "n": capacity // 2 + 1}]}


def topology_results(capacities: tuple[int, ...] = (256, 512)) -> dict[str, Any]:
    classes = [topology_class(c) for c in capacities]
    return {"classes": classes, "transitions": transitions(classes)}


def timing(median_s: float, noise: float = 0.01, samples: int = 100) -> dict[str, Any]:
    return {"samples": samples, "median_s": median_s, "mean_s": median_s,
            "min_s": median_s * 0.9, "max_s": median_s * 1.1, "rel_stddev": noise,
            "iqr_s": median_s * noise, "noise": noise}


def bench_size(n: int, *, stream_s: float = 2.0e-3, graph_s: float = 1.0e-3,
               noise: float = 0.01, samples: int = 100, node_count: int = 4,
               throttled: bool = False) -> dict[str, Any]:
    def q(t: float) -> dict[str, Any]:
        return {"host_enqueue": timing(t / 10, noise, samples), "device": timing(t, noise,
                                                                                  samples),
                "end_to_end": timing(t, noise, samples)}

    ratio = stream_s / graph_s
    iv = {"median": ratio, "low": ratio * 0.95, "high": ratio * 1.05}
    gain = stream_s - graph_s  # the break-even count is derived, as bench derives it
    return {"n": n, "capacity": n, "stream": q(stream_s), "graph": q(graph_s),
            "speedup": {"host_enqueue": iv, "device": iv, "end_to_end": iv},
            "upfront": {"capture_s": 1e-3, "instantiate_s": 1e-3, "upload_s": 1e-3,
                        "first_launch_s": 1e-3, "exec_update_s": 1e-3, "set_params_s": 1e-3},
            "break_even_launches": 3e-3 / gain if gain > 0 else None,
            "node_count": node_count, "throttled": throttled,
            # the SM clock read before and after the size (a drop of over 5% is throttling)
            "clock_mhz": {"before": 1980.0, "after": 1500.0 if throttled else 1980.0}}


def bench_results(sizes: tuple[int, ...] = (256,), **kw: Any) -> dict[str, Any]:
    return {"sizes": [bench_size(n, **kw) for n in sizes],
            "clock": {"before_mhz": 1, "after_mhz": 1},
            "settings": {"max_noise": 0.005, "min_samples": 10, "min_time_s": 0.5,
                         "timeout_s": 10.0, "flush_l2": False, "blocker_timeout_s": 5.0,
                         "context_settled_launches": 2000}}


def transitions(classes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What changes class to class, from the fingerprints, as verify derives it (the gate
    refuses a certificate whose transitions disagree with its classes)."""
    done = [c for c in classes if c["topology_hash"] is not None]
    return [{"from": a["capacity"], "to": b["capacity"],
             "change": "topology" if a["topology_hash"] != b["topology_hash"] else
             "launch shape" if a["shape_hash"] != b["shape_hash"] else "parameters only"}
            for a, b in zip(done, done[1:], strict=False)]


def plan_results(*, max_graphs: int | None = 3, current: tuple[int, ...] | None = (1, 8, 64),
                 ) -> dict[str, Any]:
    """A synthetic plan's results (made-up curve and traffic, never measured), chosen by
    graphcert.plan.optimise and compared with vllm:64 and, when given, the engine's
    `current` list (the row labelled "current")."""
    from graphcert.kinds.plan.result import plan_result
    from graphcert.plan.costs import Budgets, CostCurve, CostPoint
    from graphcert.plan.evaluate import evaluate
    from graphcert.plan.optimise import Plan, choose
    from graphcert.plan.traffic import Traffic

    us = 1e-6
    curve = CostCurve(tuple(CostPoint(s, (20 + s) * us, (30 + 4 * s) * us, 0.5, s * 2 ** 20)
                            for s in (1, 2, 4, 8, 16, 32, 64)))
    traffic = Traffic.from_counts({1: 50, 3: 30, 8: 10, 20: 6, 64: 4}, "synthetic traffic")
    budgets = Budgets(max_graphs=max_graphs)
    plan = choose(traffic, curve, budgets)
    assert isinstance(plan, Plan)
    rows = [evaluate("vllm:64", traffic, curve, budgets)]
    if current is not None:
        rows.append(evaluate(current, traffic, curve, budgets, label="current"))
    return plan_result(plan, curve, traffic, rows).to_json()


def certificate(kind: str = "topology", *, ref: str = "scan", gpu: str = "TEST-GPU",
                results: dict[str, Any] | None = None, passed: bool = True,
                reasons: list[str] | None = None, digest: str | None = None,
                created: str = CREATED) -> dict[str, Any]:
    """A sealed synthetic certificate of `kind` (a topology one's transitions derived from
    its classes)."""
    if results is None:
        results = (topology_results() if kind == "topology" else
                   plan_results() if kind == "plan" else bench_results())
    if kind == "topology" and "classes" in results:
        results = {**results, "transitions": transitions(results["classes"])}
    return make_certificate(
        kind, workload=workload(ref, digest=digest, kind=kind), environment=environment(gpu),
        results=copy.deepcopy(results),
        verdict={"passed": passed, "reasons": reasons if reasons is not None else
                 (["synthetic: all checks passed"] if passed else ["class 512: output differs"])},
        created=created)
