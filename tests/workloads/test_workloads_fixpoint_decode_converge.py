"""CPU tier for the fixpoint, converge and decode workloads: their kernels compile, their
predictions and sizing rule hold, and their numpy references are right on inputs small
enough to check by hand. Setup and record run against a fake context that records launches
instead of making them, so no GPU is needed."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from itertools import count
from typing import Any

import numpy as np
import pytest

from graphcert.errors import CudaError, GraphcertError, InputError
from graphcert.workloads import registry
from graphcert.workloads.converge import UNSUPPORTED, Converge, converge_reference, max_rounds
from graphcert.workloads.decode import Decode
from graphcert.workloads.fixpoint import Fixpoint, LabelGraph, steps_bound

# --- a fake RunContext: buffers are placeholders, kernels record what would be launched ---

_ptrs = count(0x1000, 0x1000)


class FakeBuffer:
    def __init__(self, nbytes: int):
        self.nbytes = nbytes
        self.ptr = next(_ptrs)

    def free(self) -> None:
        pass


@dataclass
class FakeLaunch:
    kernel: str
    grid: Any
    block: Any
    args: tuple[Any, ...]

    def launch(self, stream: list[FakeLaunch]) -> None:
        stream.append(self)


@dataclass
class FakeKernel:
    name: str

    def prepare(self, grid: Any, block: Any, *args: Any, shared: int = 0) -> FakeLaunch:
        return FakeLaunch(self.name, grid, block, args)


class FakeContext:
    seed = 1234

    def rng(self, salt: int = 0) -> np.random.Generator:
        return np.random.default_rng([self.seed, salt])

    def alloc(self, nbytes: int) -> FakeBuffer:
        return FakeBuffer(nbytes)

    def upload(self, array: np.ndarray) -> FakeBuffer:
        return FakeBuffer(array.nbytes)

    def kernel(self, source: str, name: str) -> FakeKernel:
        assert source in ("fixpoint.cu", "decode.cu")
        return FakeKernel(name)


def recorded(workload: Any, capacity: int, n: int) -> list[FakeLaunch]:
    stream: list[FakeLaunch] = []
    workload.record(stream, n)
    return stream


@dataclass
class FakeBuilder:
    """Records the nodes a workload's build() adds; can fail like an old driver does."""

    fail_on: str | None = None
    nodes: list[tuple[str, Any, tuple[Any, ...], list[int]]] = field(default_factory=list)
    bodies: list[FakeBuilder] = field(default_factory=list)

    def _fail(self, call: str) -> None:
        if self.fail_on == call:
            raise CudaError(call, 500, "CUDA_ERROR_NOT_FOUND", "named symbol not found")

    def conditional_handle(self, default: int = 1) -> int:
        self._fail("cuGraphConditionalHandleCreate")
        assert default == 1  # the body must run at least once per launch
        return 0xC0DE

    def add_kernel(self, kernel: FakeKernel, grid: Any, block: Any, *args: Any,
                   shared: int = 0, deps: Any = None) -> int:
        self.nodes.append(("kernel", kernel.name, args, list(deps or [])))
        return len(self.nodes) - 1

    def add_while(self, handle: Any, deps: Any = None) -> tuple[int, FakeBuilder]:
        self._fail("cuGraphAddNode")
        self.nodes.append(("while", handle, (), list(deps or [])))
        body = FakeBuilder()
        self.bodies.append(body)
        return len(self.nodes) - 1, body


def _set_up(workload: Any, capacity: int) -> Any:
    workload.setup(FakeContext(), capacity)
    return workload


# --- kernels ---


@pytest.mark.parametrize("source, names", [
    ("fixpoint.cu", ["fp_init", "fp_step", "cv_init", "cv_step", "cv_check", "cv_round"]),
    ("decode.cu", ["dc_rmsnorm", "dc_matvec", "dc_bias", "dc_gelu", "dc_residual"]),
])
def test_kernels_compile_for_sm90(source: str, names: list[str]) -> None:
    from graphcert.cuda import nvrtc

    build = nvrtc.build(source, "sm_90", use_cache=False)
    assert build.cubin.startswith(b"\x7fELF")
    for name in names:
        assert name.encode() + b"\0" in build.cubin, f"{name} missing from {source}"


def test_constructors_and_predictions_touch_no_cuda() -> None:
    code = (
        "import sys\n"
        "from graphcert.workloads.fixpoint import Fixpoint\n"
        "from graphcert.workloads.converge import Converge\n"
        "from graphcert.workloads.decode import Decode\n"
        "for w in (Fixpoint(), Converge(), Decode()):\n"
        "    w.predict(1 << 20); w.bytes_needed(1 << 20); w.reference  # no setup\n"
        "bad = sorted(m for m in sys.modules if m.startswith('cuda'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- predictions, options, registry ---


def test_predictions() -> None:
    assert Fixpoint().predict(1024) == {"kernel": 17}
    assert Fixpoint(iterations=3).predict(1) == {"kernel": 4}
    assert Decode().predict(1 << 22) == {"kernel": 20}
    assert Decode(layers=2).predict(8) == {"kernel": 10}
    assert Converge().predict(1 << 22) == {"kernel": 1, "conditional": 1}


def test_memory_estimates() -> None:
    assert Fixpoint().bytes_needed(1 << 20) == 4 * (1 << 20) * 4
    assert Converge(degree=0).bytes_needed(256) == 4 * 256 * 2 + 12
    # The brief's figure: 2^20 rows of 64 floats is 256 MiB per activation buffer.
    assert Decode().bytes_needed(1 << 20) == 4 * (256 << 20) + 4 * 4 * (64 * 64 + 128)


@pytest.mark.parametrize("make", [
    lambda: Fixpoint(iterations=0), lambda: Fixpoint(iterations=True),
    lambda: Fixpoint(degree=-1), lambda: Converge(components=0),
    lambda: Decode(layers=0), lambda: Decode(hidden=2.5),
])
def test_bad_options_are_input_errors(make: Any) -> None:
    with pytest.raises(InputError):
        make()


def test_registry_builds_with_options() -> None:
    fp = registry.load("fixpoint[iterations=3,degree=1]").native().workload
    assert (fp.iterations, fp.degree) == (3, 1)
    dec = registry.load("decode[layers=2,hidden=32]").native().workload
    assert (dec.layers, dec.hidden) == (2, 32)
    assert isinstance(registry.load("converge").native().workload, Converge)


# --- the sizing rule, checked on the recorded launches ---


def _differing_args(a: list[FakeLaunch], b: list[FakeLaunch]) -> set[tuple[str, int]]:
    assert [(x.kernel, x.grid, x.block) for x in a] == [(x.kernel, x.grid, x.block) for x in b]
    pairs = zip(a, b, strict=True)
    return {(x.kernel, i) for x, y in pairs
            for i, (p, q) in enumerate(zip(x.args, y.args, strict=True))
            if not (p is q or (isinstance(p, np.generic) and p == q))}


@pytest.mark.parametrize("make", [Fixpoint, lambda: Fixpoint(iterations=3), Decode, Converge])
def test_every_n_of_a_class_records_the_same_launches_but_n(make: Any) -> None:
    workload = _set_up(make(), 512)
    low, high = recorded(workload, 512, 257), recorded(workload, 512, 512)
    carriers = getattr(workload, "n_arguments", workload.size_params)  # converge: in the body
    named = {(p.kernel, p.index) for p in carriers}
    assert _differing_args(low, high) == named
    for launch in low:
        for p in carriers:
            if p.kernel == launch.kernel:
                assert launch.args[p.index] == p.value(257)


def test_recorded_launch_counts_follow_predictions() -> None:
    assert len(recorded(_set_up(Fixpoint(), 64), 64, 50)) == 17
    assert len(recorded(_set_up(Decode(layers=3), 64), 64, 50)) == 15
    # converge's eager path: init plus three launches per round.
    assert len(recorded(_set_up(Converge(), 64), 64, 50)) == 1 + 3 * max_rounds(64, 5)


def test_record_rejects_n_beyond_capacity() -> None:
    for workload in (Fixpoint(), Decode(), Converge()):
        _set_up(workload, 256)
        with pytest.raises(ValueError):
            workload.record([], 257)


# --- fixpoint: the generated graph and the synchronous reference ---


def _graph(capacity: int, components: int = 1, pairs: list[tuple[int, int]] | None = None,
           ) -> LabelGraph:
    """A hand-made graph: heap trees, plus one matching made of `pairs` if given."""
    if pairs is None:
        return LabelGraph(capacity, components, np.empty((0, capacity), dtype=np.uint32))
    match = np.arange(capacity, dtype=np.uint32)[None, :].copy()
    for a, b in pairs:
        match[0, a], match[0, b] = b, a
    return LabelGraph(capacity, components, match)


def test_heap_of_four_converges_in_two_synchronous_steps() -> None:
    # One tree: 0 is the root, 1 and 2 its children, 3 the child of 1.
    g = _graph(4)
    assert g.propagate(4, 0).tolist() == [0, 1, 2, 3]
    assert g.propagate(4, 1).tolist() == [0, 0, 0, 1]  # 3 only sees 1's old label
    assert g.propagate(4, 2).tolist() == [0, 0, 0, 0]


def test_step_is_synchronous_not_in_place() -> None:
    # Depth-3 vertex 7 (path 7-3-1-0): label 0 needs exactly 3 steps. An in-place sweep in
    # vertex order would give 3 label 0 in the first step already.
    g = _graph(8)
    assert g.propagate(8, 1)[3] == 1
    assert [int(g.propagate(8, k)[7]) for k in range(5)] == [7, 3, 1, 0, 0]


def test_chord_shortcuts_and_edges_beyond_n_are_ignored() -> None:
    g = _graph(8, pairs=[(0, 7)])
    assert g.propagate(8, 1)[7] == 0  # the chord carries 0 in one step
    # For n = 7 the chord's far end is outside [0, n): 6 still needs its two tree steps.
    assert g.propagate(7, 1).tolist() == [0, 0, 0, 1, 1, 2, 2]


def test_two_interleaved_trees_keep_their_own_labels() -> None:
    g = _graph(8, components=2)  # tree 0: 0,2,4,6 and tree 1: 1,3,5,7
    assert g.propagate(6, 10).tolist() == [0, 1, 0, 1, 0, 1]


def test_generated_matchings_are_symmetric_within_trees_and_seeded() -> None:
    g = LabelGraph.generate(np.random.default_rng(7), 1000, 5, 3)
    v = np.arange(1000)
    for k in range(3):
        m = g.match[k].astype(np.int64)
        assert np.array_equal(m[m], v)  # an involution: every chord goes both ways
        assert np.array_equal(m % 5, v % 5)  # never crosses trees
    again = LabelGraph.generate(np.random.default_rng(7), 1000, 5, 3)
    assert np.array_equal(g.match, again.match)


def test_induced_neighbourhoods_are_symmetric() -> None:
    g = LabelGraph.generate(np.random.default_rng(3), 64, 3, 2)
    n = 37
    edges = {(v, int(u)) for slot in g.neighbours(n) for v, u in enumerate(slot) if u < n}
    assert edges and all((u, v) in edges for v, u in edges)


@pytest.mark.parametrize("capacity", [1, 2, 8, 256, 512, 4096])
@pytest.mark.parametrize("degree", [0, 2])
def test_steps_bound_reaches_the_component_minimum(capacity: int, degree: int) -> None:
    g = LabelGraph.generate(np.random.default_rng(capacity), capacity, 5, degree)
    for n in {0, 1, capacity // 2 + 1, capacity}:
        settled = g.propagate(n, steps_bound(capacity, 5))
        assert np.array_equal(settled, np.arange(n) % 5)  # each tree's root is its minimum
        assert np.array_equal(g.step(settled, g.neighbours(n)), settled)
    bound = steps_bound(capacity, 5)
    if degree == 0 and bound > 0:  # without chords the bound is tight: one step short fails
        early = g.propagate(capacity, bound - 1)
        assert not np.array_equal(early, np.arange(capacity) % 5)


# --- converge: the WHILE loop's twin ---


def test_converge_reference_counts_rounds_of_two_steps() -> None:
    labels, rounds = converge_reference(_graph(4), 0, 10)
    assert labels.size == 0 and rounds == 1  # the body always runs once
    labels, rounds = converge_reference(_graph(4), 4, 10)  # 2 changing steps
    assert labels.tolist() == [0, 0, 0, 0] and rounds == 2
    labels, rounds = converge_reference(_graph(8), 8, 10)  # 3 changing steps
    assert labels.tolist() == [0] * 8 and rounds == 3
    labels, rounds = converge_reference(_graph(8), 8, 1)  # the guard stops it
    assert rounds == 1 and labels.tolist() != [0] * 8


@pytest.mark.parametrize("capacity", [1, 256, 512, 1 << 16])
def test_max_rounds_is_never_reached(capacity: int) -> None:
    g = LabelGraph.generate(np.random.default_rng(capacity), capacity, 5, 0)  # slowest
    labels, rounds = converge_reference(g, capacity, max_rounds(capacity, 5))
    assert rounds < max_rounds(capacity, 5)
    assert np.array_equal(labels, np.arange(capacity) % 5)


def test_converge_build_is_init_then_while_of_step_step_check() -> None:
    workload = _set_up(Converge(), 512)
    builder = FakeBuilder()
    workload.build(builder, 300)
    assert [(kind, name, deps) for kind, name, _, deps in builder.nodes] == [
        ("kernel", "cv_init", []), ("while", 0xC0DE, [0])]
    (body,) = builder.bodies
    assert [(name, deps) for _, name, _, deps in body.nodes] == [
        ("cv_step", []), ("cv_step", [0]), ("cv_check", [1])]
    check_args = body.nodes[2][2]
    assert int(check_args[1]) == 0xC0DE and int(check_args[2]) == max_rounds(512, 5)
    # The two steps ping-pong: a -> b, then b -> a, so the labels end in a.
    first, second = body.nodes[0][2], body.nodes[1][2]
    assert first[0] is second[1] and first[1] is second[0]


@pytest.mark.parametrize("call", ["cuGraphConditionalHandleCreate", "cuGraphAddNode"])
def test_converge_on_a_driver_without_conditional_nodes(call: str) -> None:
    workload = _set_up(Converge(), 64)
    with pytest.raises(GraphcertError) as info:
        workload.build(FakeBuilder(fail_on=call), 10)
    assert info.value.message == UNSUPPORTED
    assert info.value.exit_code == 2
    assert "CUDA_ERROR_NOT_FOUND" in (info.value.hint or "")


def test_converge_reference_through_the_workload() -> None:
    workload = _set_up(Converge(), 512)
    want = workload.reference(300)
    assert np.array_equal(want["labels"], np.arange(300) % 5)
    assert want["rounds"].dtype == np.uint32 and 1 < int(want["rounds"][0]) < max_rounds(512, 5)
