"""What-if attribution on a GPU (graphcert.run.profile_whatif): each node disabled in an
executable graph of its own, paired held replays, no tracer on. A serial chain of spinning
kernels gives each node its time plus the gap before it; a fork-join's short branch shows its
slack (about zero) and its long branch does not; a PyTorch step's contributions are ordered,
bounded by the replay and led by a long node. Skips only without a driver or device
(gpu_ctx), the PyTorch test also without PyTorch.

The built-in `chain` is not used for the chain: its kernels are one-thread stores of about a
microsecond, the same order as tracing's own cost per record (0.2-1 µs), so its traced medians
are not the untraced times what-if measures. Kernels spinning gc_clock_calibrate's cycles
(graphcert's own runtime kernel) last about 50 µs: tracing's cost is under 3% of one."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import graphcert
from graphcert.cli import cli
from graphcert.cuda.builder import GraphBuilder
from graphcert.cuda.context import RunContext
from graphcert.cuda.stream import Stream
from graphcert.kinds.profile.result import ProfiledClass, ProfileResult
from tests._cudatorch import cuda_torch

LONG_CYCLES = 100_000  # about 50-60 µs at an H100's 1.7-2 GHz SM clock
SHORT_CYCLES = 8_000  # about 4-5 µs
CHAIN_NODES = 6
REPLAYS = 50
TOLERANCE = 0.10


@pytest.fixture
def spin(gpu_ctx: RunContext) -> Iterator[Any]:
    yield gpu_ctx.kernel("graphcert_runtime.cu", "gc_clock_calibrate")


def _profile(gpu_ctx: RunContext, spin: Any, cycles: Sequence[int],
             edges: Sequence[tuple[int, int]], name: str) -> ProfiledClass:
    """Build a graph of spinning kernels (node i spins cycles[i], its own output slot), profile
    it through graphcert.profile (traced, then what-if with the default settings)."""
    b = GraphBuilder()
    out = gpu_ctx.alloc(16 * len(cycles))
    nodes: list[Any] = []
    for i, c in enumerate(cycles):
        deps = [nodes[a] for a, z in edges if z == i]
        nodes.append(b.add_kernel(spin, 1, 1, np.uint64(c), out.ptr + 16 * i, deps=deps))
    exe = b.graph.instantiate()
    try:
        with Stream() as stream:
            result: ProfileResult = graphcert.profile(
                b.graph, replay=lambda: exe.launch(stream), replays=REPLAYS, stream=stream,
                name=name)
    finally:
        exe.destroy()
        b.graph.destroy()
    (cls,) = result.classes
    assert cls.overhead is not None, cls.overhead_reason
    assert cls.what_if is not None, cls.what_if_reason
    assert cls.what_if_reason is None
    for n in cls.what_if.nodes:
        assert n.low_ns <= n.contribution_ns <= n.high_ns and n.pairs == 30
    print(name, "baseline", cls.what_if.baseline_ns, "what-if",
          [(n.index, round(n.contribution_ns), round(n.low_ns), round(n.high_ns))
           for n in cls.what_if.nodes],
          "traced", [(n.index, round(n.median_ns)) for n in cls.profile.nodes],
          "gaps", [(g.from_index, g.to_index, round(g.median_ns)) for g in cls.profile.gaps])
    return cls


def test_a_serial_chain_attributes_each_node_its_time_and_gap(gpu_ctx: RunContext,
                                                              spin: Any) -> None:
    edges = [(i, i + 1) for i in range(CHAIN_NODES - 1)]
    cls = _profile(gpu_ctx, spin, [LONG_CYCLES] * CHAIN_NODES, edges, "whatif-chain")
    w, p = cls.what_if, cls.profile
    assert w is not None and cls.overhead is not None
    # traced medians stand for untraced times only where tracing's cost is small beside them
    assert cls.overhead.touched(p) == (), "tracing distorts a node's time"
    assert sorted(n.index for n in w.nodes) == sorted(n.index for n in p.nodes)
    assert w.skipped == 0
    medians = {n.index: n.median_ns for n in p.nodes}
    into = {g.to_index: g.median_ns for g in p.gaps}
    out_of = {g.from_index: g.median_ns for g in p.gaps}
    for n in w.nodes:
        # the first node has no incoming gap: removing it saves the gap after it instead
        gap = into.get(n.index, out_of.get(n.index, 0.0))
        expected = medians[n.index] + gap
        assert abs(n.contribution_ns - expected) <= TOLERANCE * expected, (n, expected)


def test_a_fork_joins_short_branch_shows_its_slack(gpu_ctx: RunContext, spin: Any) -> None:
    """0 -> {1 -> 2 (long, long), 3 (short)} -> 4: node 3 waits on nothing the join needs
    sooner, so removing it saves about nothing; removing 1 or 2 shortens the replay."""
    cycles = [SHORT_CYCLES, LONG_CYCLES, LONG_CYCLES, SHORT_CYCLES, SHORT_CYCLES]
    edges = [(0, 1), (1, 2), (0, 3), (2, 4), (3, 4)]
    cls = _profile(gpu_ctx, spin, cycles, edges, "whatif-fork")
    w, p = cls.what_if, cls.profile
    assert w is not None
    medians = {n.index: n.median_ns for n in p.nodes}
    by_index = {n.index: n for n in w.nodes}
    # canonical indices follow the graph's order, not the build order: find the nodes by time
    longs = sorted(medians, key=lambda i: -medians[i])[:2]
    shorts = [i for i in medians if i not in longs]
    short_branch = [i for i in shorts if not any((i, j) in p.edges or (j, i) in p.edges
                                                 for j in longs)]
    (slack,) = short_branch  # the short node joined to neither long one
    s = by_index[slack]
    assert s.low_ns <= 0.0 <= s.high_ns or abs(s.contribution_ns) < 0.1 * medians[slack], s
    for i in longs:
        assert by_index[i].contribution_ns > 0.5 * medians[i], (by_index[i], medians[i])


def test_a_torch_step_is_attributed(gpu_ctx: RunContext) -> None:
    cuda_torch()
    ref = str(Path("examples/steps/torch_decode.py").resolve()) + ":DECODE"
    done = CliRunner().invoke(cli, ["profile", ref, "--classes", "1", "--replays", "20",
                                    "--no-certificate", "--json"])
    assert done.exit_code == 0, done.output
    (run,) = json.loads(done.stdout)
    cls = ProfiledClass.from_json(run["results"]["classes"][0])
    w, p = cls.what_if, cls.profile
    assert w is not None, cls.what_if_reason
    assert w.nodes
    assert all(n.low_ns <= n.contribution_ns <= n.high_ns for n in w.nodes)
    assert cls.overhead is not None
    assert sum(n.contribution_ns for n in w.nodes) <= cls.overhead.untraced_ns * 1.1
    longest = [n.index for n in sorted(p.nodes, key=lambda n: -n.median_ns)[:3]]
    top = max(w.nodes, key=lambda n: n.contribution_ns)
    assert top.index in longest, (top, longest)
    print("torch step what-if", w.selection, [(n.index, round(n.contribution_ns))
                                              for n in w.nodes])
