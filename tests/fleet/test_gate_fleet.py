"""The gate over certificates from many GPUs: topology equal across GPUs, timings per model.

Every certificate here is synthetic (tests/_certfactory.py, GPU names TEST-GPU*): the copies
"from a second GPU" are made by re-labelling a synthetic certificate's GPU (name, UUID) and
re-sealing it with graphcert's own digest function, and the two-worker test runs two local
Python processes that write synthetic results through graphcert's certificate writer. None of
it is a GPU recording.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from _certfactory import (
    bench_results,
    certificate,
    fake_digest,
    synthetic_hash,
    transitions,
)

from graphcert.cert.document import compute_digest
from graphcert.cert.results.fleet import Gpu
from graphcert.gate import run_gate
from graphcert.gate.policy import Policy, parse_policy
from graphcert.model import NodeKind as K
from graphcert.model import RawGraph, RawNode, snapshot_from_raw, snapshot_to_json
from graphcert.run import fleet, worker
from graphcert.workloads import registry

ROOT = Path(__file__).resolve().parents[2]
UUID_A = "GPU-aaaaaaaa-1111-2222-3333-444444444444"
UUID_B = "GPU-bbbbbbbb-1111-2222-3333-444444444444"


def relabel(cert: dict[str, Any], name: str, uuid: str) -> dict[str, Any]:
    """A copy of `cert` as if made on GPU (name, uuid), re-sealed with the digest function."""
    out = copy.deepcopy(cert)
    out["environment"]["gpu"].update(name=name, uuid=uuid)
    out["digest"] = compute_digest(out)
    return out


def put(folder: Path, name: str, cert: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(cert))


def gate(*paths: Path, policy: Policy | None = None, baseline: Path | None = None) -> Any:
    return run_gate(list(paths), policy=policy or Policy(), baseline=baseline,
                    created="2026-01-01T00:00:00Z", digest_of=fake_digest)


def cross(report: Any) -> list[Any]:
    return [r for r in report.checks if r.rule.value == "allow_cross_gpu_topology"]


def test_two_gpus_of_one_model_pass_and_are_told_apart(tmp_path: Path) -> None:
    base = certificate("topology", ref="scan")
    put(tmp_path, "topology-scan-TEST-GPU-aaaaaaaa.json", relabel(base, "TEST-GPU", UUID_A))
    put(tmp_path, "topology-scan-TEST-GPU-bbbbbbbb.json", relabel(base, "TEST-GPU", UUID_B))
    report = gate(tmp_path)
    assert report.exit_code == 0, report.failures()
    [rule] = cross(report)
    assert rule.status.value == "pass" and "equal across 2 GPUs (2 class" in rule.summary
    assert sorted(c.gpu for c in report.certificates) == ["TEST-GPU aaaaaaaa",
                                                           "TEST-GPU bbbbbbbb"]


def test_one_gpu_alone_has_no_cross_gpu_rule(tmp_path: Path) -> None:
    put(tmp_path, "t.json", certificate("topology", ref="scan"))
    report = gate(tmp_path)
    assert cross(report) == [] and [c.gpu for c in report.certificates] == ["TEST-GPU"]


def test_same_gpu_twice_is_still_a_duplicate(tmp_path: Path) -> None:
    base = certificate("topology", ref="scan")
    put(tmp_path, "a.json", relabel(base, "TEST-GPU", UUID_A))
    put(tmp_path, "b.json", relabel(base, "TEST-GPU", UUID_A))
    with pytest.raises(Exception, match="a second topology certificate"):
        gate(tmp_path)


def _altered(cert: dict[str, Any], capacity: int, snapshot: dict[str, Any] | None = None
             ) -> dict[str, Any]:
    out = copy.deepcopy(cert)
    for cls in out["results"]["classes"]:
        if cls["capacity"] == capacity:
            cls["topology_hash"] = synthetic_hash("another topology")
            cls["counts"] = {**cls["counts"], "kernel": cls["counts"]["kernel"] + 1}
            cls.update(node_count=cls["node_count"] + 1, predicted=dict(cls["counts"]))
            if snapshot is not None:
                cls["snapshot"] = snapshot
    out["results"]["transitions"] = transitions(out["results"]["classes"])
    out["digest"] = compute_digest(out)
    return out


def test_a_class_whose_topology_differs_fails_naming_both_gpus(tmp_path: Path) -> None:
    base = certificate("topology", ref="scan")
    put(tmp_path, "a.json", relabel(base, "TEST-GPU-A", UUID_A))
    put(tmp_path, "b.json", _altered(relabel(base, "TEST-GPU-B", UUID_B), 512))
    report = gate(tmp_path)
    assert report.exit_code == 1
    [rule] = cross(report)
    assert rule.status.value == "fail" and "scan: topology differs across 2 GPUs" in rule.summary
    [detail] = rule.details
    assert detail.startswith("class 512: ")
    assert f"TEST-GPU-A ({UUID_A}) [{tmp_path / 'a.json'}] vs TEST-GPU-B ({UUID_B}) " \
        f"[{tmp_path / 'b.json'}]" in detail
    assert "topology hash" in detail and "kernel 3->4" in detail  # no snapshot: hashes, counts
    allowed = gate(tmp_path, policy=parse_policy({"allow_cross_gpu_topology": True}, "t"))
    assert allowed.exit_code == 0 and cross(allowed)[0].status.value == "warn"


def _snap(names: list[str]) -> dict[str, Any]:
    """A synthetic snapshot document: a chain of kernels with these names."""
    nodes = tuple(RawNode(i, K.KERNEL, {"name": n, "grid": [1, 1, 1], "block": [256, 1, 1],
                                        "shared_mem_bytes": 0, "param_sizes": [8]})
                  for i, n in enumerate(names))
    raw = RawGraph(nodes, tuple((i, i + 1) for i in range(len(names) - 1)))
    return snapshot_to_json(snapshot_from_raw(raw, meta={"workload": "synthetic"}))


def test_embedded_snapshots_name_the_first_differing_node(tmp_path: Path) -> None:
    base = certificate("topology", ref="scan")
    a = copy.deepcopy(base)
    a["results"]["classes"][1]["snapshot"] = _snap(["k_a", "k_b", "k_c"])
    put(tmp_path, "a.json", relabel(a, "TEST-GPU-A", UUID_A))
    put(tmp_path, "b.json", _altered(relabel(base, "TEST-GPU-B", UUID_B), 512,
                                     _snap(["k_a", "k_b", "k_d"])))
    [rule] = cross(gate(tmp_path))
    assert rule.status.value == "fail"
    assert "first differing node: " in rule.details[0] and "k_" in rule.details[0]


def test_timings_are_compared_per_gpu_model(tmp_path: Path) -> None:
    """A bench certificate meets only a baseline of its GPU model: an H-model baseline never
    judges another model's timings, and two GPUs of one model each meet that model's."""
    slow = certificate("bench", ref="chain", results=bench_results(graph_s=2.0e-3))
    fast = certificate("bench", ref="chain", results=bench_results(graph_s=1.0e-3))
    put(tmp_path / "base", "b.json", relabel(fast, "TEST-GPU-A", UUID_A))
    # another model is another GPU: a UUID of its own (one GPU has one name)
    put(tmp_path / "cur", "other-model.json",
        relabel(slow, "TEST-GPU-B", "GPU-cccccccc-1111-2222-3333-444444444444"))
    report = gate(tmp_path / "cur", baseline=tmp_path / "base")
    [cert] = report.certificates
    assert [r.summary for r in cert.rules if r.rule.value == "max_regression"] == \
        ["no baseline certificate to compare with"]
    put(tmp_path / "cur", "one.json", relabel(slow, "TEST-GPU-A", UUID_A))
    put(tmp_path / "cur", "two.json", relabel(fast, "TEST-GPU-A", UUID_B))
    report = gate(tmp_path / "cur", baseline=tmp_path / "base")
    by_path = {c.path.rsplit("/", 1)[-1]: c for c in report.certificates}
    regress = {p: next(r for r in c.rules if r.rule.value == "max_regression")
               for p, c in by_path.items()}
    assert regress["one.json"].status.value == "fail"  # same model, slower than its baseline
    assert regress["two.json"].status.value == "pass"  # same model, another GPU: compared too
    assert regress["other-model.json"].summary == "no baseline certificate to compare with"


# A synthetic worker standing in for `graphcert verify scan join` on one GPU, speaking the
# worker protocol: it writes synthetic results through graphcert's own certificate writer,
# named as its job says (the job, not the environment, asks for UUIDs in the names).
WORKER = r"""
import os, sys
from pathlib import Path
sys.path.insert(0, os.environ["TESTS_DIR"])
from _certfactory import environment, topology_results, transitions
from graphcert.kinds.topology.result import VerifyResult
from graphcert.run.environment import write
from graphcert.run.worker import serve
from graphcert.workloads.registry import load

def command(job, events):
    dev = job.device
    out = Path(job.params["out_dir"])
    env = environment("TEST-GPU")
    env["gpu"]["uuid"] = f"GPU-{dev:08d}-0000-0000-0000-synthetic000"
    for ref in ("scan", "join"):
        results = topology_results()
        if ref == os.environ.get("ALTER_REF") and dev == 1:
            results["classes"][0]["topology_hash"] = "synthetic-different-topology"
            results["transitions"] = transitions(results["classes"])
        result = VerifyResult.from_json(results, {"passed": True, "reasons": ["synthetic"]})
        print(write(result, out, load(ref), env, key=None, uuid_names=job.uuid_names))
    return 0

sys.exit(serve(sys.argv[1:], command))
"""


@pytest.mark.parametrize("alter", [None, "join"])
def test_two_local_workers_then_one_gate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                         alter: str | None) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    monkeypatch.setattr(worker, "worker_command", lambda: [sys.executable, str(script)])
    out = tmp_path / "collected"
    gpus = [Gpu(0, "TEST-GPU", "GPU-00000000"), Gpu(1, "TEST-GPU", "GPU-00000001")]
    env = fleet.worker_env(os.environ, extra={
        "TESTS_DIR": str(ROOT / "tests"), "ALTER_REF": alter or "",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])})
    jobs = [(g, fleet.command_job("verify", {"workloads": ("scan", "join"),
                                                "out_dir": str(out)}, g,
                                  several=True, progress=False), env) for g in gpus]
    result = fleet.run_workers("verify", jobs)
    assert result.exit_code == 0, [w.messages for w in result.workers]
    names = sorted(p.name for p in out.iterdir())
    assert names == ["topology-join-TEST-GPU-00000000.json",
                     "topology-join-TEST-GPU-00000001.json",
                     "topology-scan-TEST-GPU-00000000.json",
                     "topology-scan-TEST-GPU-00000001.json"]
    report = run_gate([out], policy=Policy(), created="2026-01-01T00:00:00Z",
                      digest_of=registry.source_digest)
    rules = {r.summary.split(":")[0]: r for r in cross(report)}
    assert set(rules) == {"join", "scan"}
    if alter is None:
        assert report.exit_code == 0 and all(r.status.value == "pass" for r in rules.values())
    else:
        assert report.exit_code == 1 and rules["scan"].status.value == "pass"
        assert rules["join"].status.value == "fail"
        detail = rules["join"].details[0]
        assert "GPU-00000000-0000-0000-0000-synthetic000" in detail
        assert "GPU-00000001-0000-0000-0000-synthetic000" in detail
