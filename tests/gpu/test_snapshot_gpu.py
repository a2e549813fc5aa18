"""The snapshot reader on real graphs: every field of an explicitly built graph, the node kinds
each built-in must have, and fingerprints identical across separate processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from graphcert.cuda.context import RunContext
from graphcert.cuda.snapshot import read_snapshot
from graphcert.model import NodeKind
from graphcert.run.capture import capture_sizes
from graphcert.run.session import WorkloadSession
from tests._env import child_env

from .every_kind import N, build_every_kind

ROOT = Path(__file__).resolve().parents[2]


def test_builder_graph_reads_back_every_field(gpu_ctx: RunContext, test_kernels: Path) -> None:
    g = build_every_kind(gpu_ctx, test_kernels)
    snap = read_snapshot(g.builder.graph)
    g.close(gpu_ctx)
    n = N

    kinds = [node.kind for node in snap.nodes]
    assert snap.counts() == {"mem_alloc": 1, "memset": 1, "kernel": 1, "mem_free": 1,
                             "memcpy": 1, "host": 1, "graph": 1, "event_record": 1,
                             "event_wait": 1, "conditional": 1, "empty": 1}
    by_kind = {node.kind: node for node in snap.nodes}
    assert kinds[0] is NodeKind.MEM_ALLOC and kinds[-1] is NodeKind.EMPTY
    assert by_kind[NodeKind.MEM_ALLOC].attrs["bytes"] == 4 * n
    memset = by_kind[NodeKind.MEMSET]
    assert {k: memset.attrs[k] for k in ("element_size", "width", "height", "value", "bytes")} \
        == {"element_size": 4, "width": n, "height": 1, "value": 7, "bytes": 4 * n}
    assert memset.deps == (by_kind[NodeKind.MEM_ALLOC].index,)
    kernel = by_kind[NodeKind.KERNEL]
    assert kernel.attrs["name"] == "t_copy_u32"
    assert kernel.attrs["grid"] == [4, 1, 1] and kernel.attrs["block"] == [256, 1, 1]
    assert kernel.attrs["shared_mem_bytes"] == 128
    assert kernel.attrs["param_sizes"] == [8, 8, 4]
    assert kernel.attrs["cooperative"] is False
    memcpy = by_kind[NodeKind.MEMCPY]
    assert memcpy.attrs["direction"] == "DtoH" and memcpy.attrs["bytes"] == 4 * n
    assert set(by_kind[NodeKind.MEM_FREE].deps) == {kernel.index}
    (sub_snap,) = by_kind[NodeKind.GRAPH].children
    assert [(c.kind, c.attrs["name"]) for c in sub_snap.nodes] == [(NodeKind.KERNEL,
                                                                     "t_increment")]
    conditional = by_kind[NodeKind.CONDITIONAL]
    assert conditional.attrs["type"] == "while"
    (body_snap,) = conditional.children
    body_kernel = body_snap.nodes[0].attrs
    assert body_kernel["name"] == "t_countdown"
    # Read whole on every driver (from the DOT print's node handle where the driver lacks
    # cuGraphNodeGetParams): nothing left unread.
    assert body_kernel["param_sizes"] == [8, 8, 8] and "unread" not in body_kernel
    assert conditional.attrs["bodies_read"] in ("driver", "dot")
    assert set(by_kind[NodeKind.EMPTY].deps) == {conditional.index,
                                                 by_kind[NodeKind.MEM_FREE].index}
    assert len(snap.edges) == 11


REQUIRED = {
    "scan": {"kernel"}, "join": {"kernel"}, "fixpoint": {"kernel"}, "decode": {"kernel"},
    "resident": {"kernel", "memcpy", "memset"}, "chain": {"kernel"},
    "converge": {"conditional", "kernel"},
}


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_builtin_snapshots_have_their_node_kinds(gpu_ctx: RunContext, name: str) -> None:
    session = WorkloadSession(gpu_ctx, name)
    (result,) = list(capture_sizes(session, [1000], "global"))
    counts = result.snapshot.counts()
    assert REQUIRED[name] <= set(counts), counts
    if name == "resident":
        assert counts["memcpy"] == 2
    if name == "converge":
        (cond,) = [n for n in result.snapshot.nodes if n.kind is NodeKind.CONDITIONAL]
        assert cond.attrs["type"] == "while" and cond.children
    assert "digraph" in result.dot
    assert result.capture_s > 0 and result.instantiate_s > 0


def test_fingerprints_identical_across_three_processes(gpu_ctx: RunContext, tmp_path: Path) -> None:
    hashes = set()
    env = child_env()
    for i in range(3):
        proc = subprocess.run(
            [sys.executable, "-m", "graphcert", "capture", "scan", "--size", "65537", "--json",
             "--out", str(tmp_path / str(i))], capture_output=True, text=True, env=env,
            cwd=ROOT, timeout=300)
        assert proc.returncode == 0, proc.stderr
        (row,) = json.loads(proc.stdout)["classes"]
        hashes.add((row["topology_hash"], row["shape_hash"], row["nodes"]))
    assert len(hashes) == 1, hashes
    ((_, _, nodes),) = hashes
    assert nodes == 5  # the scan's own prediction for 65,537 elements
