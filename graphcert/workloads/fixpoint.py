"""`fixpoint`: label propagation for connected components, K synchronous steps as K launches.

The generated graph (`LabelGraph`, shared with `converge`) is sized by the capacity class:
`components` binary-heap trees interleaved by vertex number (vertex v is node v // R of
tree v % R, R = components), plus `degree` random perfect matchings inside each tree as
chords. Size n runs on the subgraph induced by vertices [0, n): the kernels skip any edge
with an end >= n, so every n of a class uses the same buffers and launch geometry and n is
the only size-dependent kernel argument. [0, n) is closed under "parent of", so each tree
stays connected and the induced graph has exactly min(n, R) components.

One step is synchronous: out[v] = min(in[v], in[u] for each neighbour u < n), read from one
buffer and written to the other (ping-pong). No thread reads what another writes, so the
GPU result is independent of thread order and equals the numpy reference bit for bit.
(An in-place asynchronous update would be faster to converge but could propagate a label
further than K synchronous steps do, and then no numpy reference would match exactly.)

Convergence bound: label c (the root of tree c, its smallest vertex) reaches a vertex of
heap depth d in at most d steps, and chords only shorten paths, so every n <= capacity is
at its fixed point after `steps_bound(capacity, R)` = floor(log2(ceil(capacity / R)))
steps, the depth of the deepest heap node (tight when degree is 0).

This module imports no CUDA: buffers and kernels come from the RunContext in setup().
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from graphcert.errors import InputError
from graphcert.workloads import memo
from graphcert.workloads.base import SizeParam, Tolerance

if TYPE_CHECKING:
    from graphcert.cuda.context import RunContext
    from graphcert.cuda.memory import DeviceBuffer
    from graphcert.cuda.module import Kernel, PreparedLaunch
    from graphcert.cuda.stream import Stream

FIXPOINT_SOURCE = "fixpoint.cu"
BLOCK = 256  # threads per block; one thread per vertex
GRAPH_SALT = 0xF1C5  # ctx.rng salt of the generated graph, shared by fixpoint and converge
_NO_LABEL = np.uint32(0xFFFFFFFF)  # larger than any label: "no neighbour here"


def grid_for(capacity: int) -> int:
    """Blocks covering `capacity` vertices (at least one, so a class of 1 still launches)."""
    return max(1, -(-capacity // BLOCK))


def steps_bound(capacity: int, components: int) -> int:
    """Synchronous steps after which every n <= capacity is at its fixed point: the deepest
    heap depth, floor(log2(ceil(capacity / components))) (see the module docstring)."""
    per_tree = max(1, -(-capacity // components))
    return per_tree.bit_length() - 1


def check_options(degree: int, components: int) -> None:
    """Reject graph options the kernels cannot run, at construction (before any CUDA)."""
    if isinstance(degree, bool) or not isinstance(degree, int) or degree < 0:
        raise InputError(f"degree must be an integer >= 0, got {degree!r}")
    if isinstance(components, bool) or not isinstance(components, int) or components < 1:
        raise InputError(f"components must be an integer >= 1, got {components!r}")


@dataclass(frozen=True)
class LabelGraph:
    """The generated graph of one capacity class: R interleaved heap trees plus chords.

    `match[k, v]` is v's partner in random matching k (itself when unpaired); the tree
    edges are implicit in the vertex numbering and never stored.
    """

    capacity: int
    components: int
    match: np.ndarray  # (degree, capacity) uint32

    @property
    def degree(self) -> int:
        return int(self.match.shape[0])

    @classmethod
    def generate(cls, rng: np.random.Generator, capacity: int, components: int,
                 degree: int) -> LabelGraph:
        """Deterministic for a given generator state; chords never cross trees."""
        match = np.empty((degree, capacity), dtype=np.uint32)
        for k in range(degree):
            for c in range(min(components, capacity)):
                members = rng.permutation(np.arange(c, capacity, components, dtype=np.uint32))
                pairs = members.size // 2
                a, b = members[:pairs], members[pairs:2 * pairs]
                match[k, a], match[k, b] = b, a
                if members.size % 2:  # the odd one out is its own partner: a no-op chord
                    match[k, members[-1]] = members[-1]
        return cls(capacity, components, match)

    def neighbours(self, n: int) -> list[np.ndarray]:
        """One index array per neighbour slot (parent, two children, each matching): the
        neighbour of each v < n in that slot, or n where there is none in [0, n)."""
        v = np.arange(n, dtype=np.int64)
        j, c = np.divmod(v, self.components)
        parent = np.where(j > 0, (j - 1) // 2 * self.components + c, v)
        left = (2 * j + 1) * self.components + c
        slots = [parent, left, left + self.components]
        slots += [self.match[k, :n].astype(np.int64) for k in range(self.degree)]
        return [np.where(s < n, s, n) for s in slots]

    def step(self, labels: np.ndarray, slots: list[np.ndarray]) -> np.ndarray:
        """One synchronous step from a copy: the numpy twin of fp_step."""
        padded = np.append(labels, _NO_LABEL)  # index n reads "no label"
        out = labels.copy()
        for s in slots:
            np.minimum(out, padded[s], out=out)
        return out

    def propagate(self, n: int, steps: int) -> np.ndarray:
        """Labels of [0, n) after `steps` synchronous steps from singletons."""
        slots = self.neighbours(n)
        labels = np.arange(n, dtype=np.uint32)
        for _ in range(steps):
            labels = self.step(labels, slots)
        return labels


def label_graph(seed: int, capacity: int, components: int, degree: int) -> LabelGraph:
    """The generated graph of a class, from the seed alone (the matchings cached)."""
    match = memo.cached(("label.match", seed, capacity, components, degree),
                        lambda: LabelGraph.generate(np.random.default_rng([seed, GRAPH_SALT]),
                                                    capacity, components, degree).match)
    return LabelGraph(capacity, components, match)


def labels_after(seed: int, graph: LabelGraph, n: int, steps: int) -> tuple[np.ndarray, int | None]:
    """(labels of [0, n) after `steps` synchronous steps, T): T is the number of steps that
    change anything when it is known to be <= steps, else None. Bit-identical to
    graph.propagate(n, steps): once a step changes nothing, every later step is the same.

    Cached per (seed, graph, n) and carried forward, so fixpoint's K steps and converge's
    run to the fixed point over the same graph share the work."""
    key = ("label.walk", seed, graph.capacity, graph.components, graph.degree, n)
    # what this function stores under its key: (labels, steps reached, fixed point or None)
    entry = cast("tuple[np.ndarray, int, int | None] | None", memo.lookup(key))
    if entry is not None:
        labels, reached, fixed = entry
        if fixed is not None and steps >= fixed:
            return labels, fixed
        if steps == reached:
            return labels, None
    if entry is None or steps < entry[1]:
        labels, reached, fixed = np.arange(n, dtype=np.uint32), 0, None
    slots = graph.neighbours(n)
    padded = np.empty(n + 1, dtype=np.uint32)
    padded[n] = _NO_LABEL  # index n reads "no label"
    while reached < steps:
        padded[:n] = labels
        out = labels.copy()
        for s in slots:
            np.minimum(out, padded[s], out=out)
        if np.array_equal(out, labels):
            fixed = reached
            break
        labels, reached = out, reached + 1
    if entry is None or reached >= entry[1]:
        memo.store(key, (labels, reached, fixed))
    return labels, fixed


class Fixpoint:
    """K synchronous label-propagation steps over the generated graph, one launch each."""

    name = "fixpoint"
    description = "label propagation for connected components, K iterations as K launches"
    kernel_files: tuple[str, ...] = (FIXPOINT_SOURCE,)
    # n is argument 1 of fp_init(labels, n) and 3 of fp_step(in, out, match, n, cap, ...).
    size_params: tuple[SizeParam, ...] = (SizeParam("fp_init", 1), SizeParam("fp_step", 3))
    tolerance = Tolerance()  # labels are integers: exact

    def __init__(self, iterations: int = 16, degree: int = 2, components: int = 5):
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
            raise InputError(f"iterations must be an integer >= 1, got {iterations!r}")
        check_options(degree, components)
        self.iterations = iterations
        self.degree = degree
        self.components = components
        self._graph: LabelGraph | None = None
        self._labels: tuple[DeviceBuffer, DeviceBuffer] | None = None
        self._match: DeviceBuffer | None = None
        self._kernels: tuple[Kernel, Kernel] | None = None  # fp_init, fp_step
        self._capacity = 0
        self._seed = 0
        self._cached: tuple[int, list[PreparedLaunch]] | None = None

    def predict(self, capacity: int) -> dict[str, int]:
        return {"kernel": 1 + self.iterations}  # fp_init, then one fp_step per iteration

    def bytes_needed(self, capacity: int) -> int:
        return 4 * capacity * (2 + self.degree)  # two label buffers and the matchings

    def setup(self, ctx: RunContext, capacity: int) -> None:
        self._capacity = int(capacity)
        self._seed = ctx.seed
        self._graph = label_graph(ctx.seed, self._capacity, self.components, self.degree)
        self._match = ctx.upload(self._graph.match)
        # Poisoned, so a run that skips a vertex cannot pass on a previous run's answer.
        poison = np.full(self._capacity, 0xDEADBEEF, dtype=np.uint32)
        self._labels = (ctx.upload(poison), ctx.upload(poison))
        self._kernels = (ctx.kernel(FIXPOINT_SOURCE, "fp_init"),
                         ctx.kernel(FIXPOINT_SOURCE, "fp_step"))
        self._cached = None

    def record(self, stream: Stream, n: int) -> None:
        for launch in self._launches(n):
            launch.launch(stream)

    def _launches(self, n: int) -> list[PreparedLaunch]:
        # Packed once per n, so a timed stream loop pays only for the launches themselves.
        if self._labels is None or self._match is None or self._kernels is None:
            raise RuntimeError("fixpoint: record() before setup()")
        if not 0 <= n <= self._capacity:
            raise ValueError(f"fixpoint: n={n} does not fit capacity {self._capacity}")
        if self._cached is not None and self._cached[0] == n:
            return self._cached[1]
        grid, n32 = grid_for(self._capacity), np.uint32(n)
        a, b = self._labels
        init, step = self._kernels
        launches = [init.prepare(grid, BLOCK, a, n32)]
        for i in range(self.iterations):
            src, dst = (a, b) if i % 2 == 0 else (b, a)
            launches.append(step.prepare(
                grid, BLOCK, src, dst, self._match, n32, np.uint32(self._capacity),
                np.uint32(self.degree), np.uint32(self.components)))
        self._cached = (n, launches)
        return launches

    def outputs(self, n: int) -> dict[str, np.ndarray]:
        assert self._labels is not None
        final = self._labels[self.iterations % 2]  # the last step wrote b when K is odd
        return {"labels": final.download(np.uint32, n)}

    def reference(self, n: int) -> dict[str, np.ndarray]:
        assert self._graph is not None
        return {"labels": labels_after(self._seed, self._graph, n, self.iterations)[0]}

    def teardown(self) -> None:
        for buf in (*(self._labels or ()), self._match):
            if buf is not None:
                buf.free()
        self._labels = self._match = self._graph = self._kernels = None
        self._cached = None
