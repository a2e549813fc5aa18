"""`converge`: the fixpoint workload's label propagation run to convergence in a conditional
WHILE node, built node by node.

Graph (top level): cv_init (singleton labels, cleared state) -> WHILE. The WHILE body is one
round: cv_step a->b, cv_step b->a (so the labels end in `a` whatever the round count), then
cv_check, which counts the round, clears the changed flag and sets the loop condition to
"this round changed a label". The condition handle defaults to 1 at every launch, so the
body runs at least once and each launch starts afresh.

Outputs: the labels and the number of rounds the loop ran, so a loop that stopped early or
ran on is caught even where the labels happen to be right (small n).

The eager path (`record`, no graph) runs a fixed `max_rounds(capacity, components)`
rounds with cv_round in place of cv_check: the first round that changes nothing marks the
run done and later rounds return at once, so it produces the same labels and round count.
max_rounds is also the WHILE guard, and it is proven sufficient: a run makes
T <= steps_bound changing steps (fixpoint.py); round r changes something iff its first step
2r - 1 <= T, so the last round (the first that changes nothing) is (T + 1) // 2 + 1, at
most max_rounds - 1.

Conditional nodes need driver 12.3+. This module cannot ask the driver's version (only
graphcert.cuda imports cuda.bindings); it turns the builder's failure into a GraphcertError
with exit code 2 that reports map to "unsupported".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphcert.errors import GraphcertError
from graphcert.workloads.base import SizeParam, Tolerance
from graphcert.workloads.fixpoint import (
    BLOCK,
    FIXPOINT_SOURCE,
    LabelGraph,
    check_options,
    grid_for,
    label_graph,
    labels_after,
    steps_bound,
)

if TYPE_CHECKING:
    from graphcert.cuda.builder import GraphBuilder
    from graphcert.cuda.context import RunContext
    from graphcert.cuda.memory import DeviceBuffer
    from graphcert.cuda.module import Kernel, PreparedLaunch
    from graphcert.cuda.stream import Stream

UNSUPPORTED = "converge needs conditional graph nodes (driver 12.3+): unsupported on this driver"
_STATE_WORDS = 3  # changed, rounds, done: the CV_* indices of fixpoint.cu
_ROUNDS_OFFSET = 4  # byte offset of state[CV_ROUNDS]


def max_rounds(capacity: int, components: int) -> int:
    """Rounds the eager path runs and the WHILE loop may run: one more than any run needs."""
    return (steps_bound(capacity, components) + 1) // 2 + 2


def converge_reference(graph: LabelGraph, n: int, limit: int) -> tuple[np.ndarray, int]:
    """numpy twin of the WHILE loop: rounds of two steps until a round changes nothing (or
    `limit` rounds ran). Returns the labels and the number of rounds."""
    slots = graph.neighbours(n)
    labels = np.arange(n, dtype=np.uint32)
    rounds = 0
    while True:
        first = graph.step(labels, slots)
        second = graph.step(first, slots)
        changed = not (np.array_equal(first, labels) and np.array_equal(second, first))
        labels, rounds = second, rounds + 1
        if not changed or rounds >= limit:
            return labels, rounds


def converge_reference_cached(seed: int, graph: LabelGraph, n: int,
                              limit: int) -> tuple[np.ndarray, int]:
    """converge_reference from the shared label walk (fixpoint.labels_after), bit-identical.

    With T changing steps, round r changes something iff its first step 2r - 1 <= T, so the
    loop stops after round (T + 1) // 2 + 1 with the fixed point, unless `limit` comes
    first; either way the labels are those after min(2 * limit, T) steps."""
    labels, changing = labels_after(seed, graph, n, 2 * limit)
    if changing is None:
        return labels, limit
    return labels, min((changing + 1) // 2 + 1, limit)


class Converge:
    """Label propagation to its fixed point inside a conditional WHILE node."""

    name = "converge"
    description = "label propagation until convergence in a conditional WHILE node"
    kernel_files: tuple[str, ...] = (FIXPOINT_SOURCE,)
    # n is argument 1 of cv_init and 3 of cv_step, but the cv_step nodes live in the WHILE
    # body, which driver 13.0 does not hand back through the exec (no cuGraphNodeGetParams):
    # setting n on cv_init alone gives wrong answers. So none are named; verify updates this
    # workload by rebuilding the graph and cuGraphExecUpdate, which reaches the body.
    size_params: tuple[SizeParam, ...] = ()
    n_arguments: tuple[SizeParam, ...] = (SizeParam("cv_init", 1), SizeParam("cv_step", 3))
    tolerance = Tolerance()  # integers: exact

    def __init__(self, degree: int = 2, components: int = 5):
        check_options(degree, components)
        self.degree = degree
        self.components = components
        self._graph: LabelGraph | None = None
        self._labels: tuple[DeviceBuffer, DeviceBuffer] | None = None
        self._match: DeviceBuffer | None = None
        self._state: DeviceBuffer | None = None
        self._kernels: dict[str, Kernel] = {}
        self._capacity = 0
        self._max_rounds = 0
        self._seed = 0
        self._cached: tuple[int, list[PreparedLaunch]] | None = None

    def predict(self, capacity: int) -> dict[str, int]:
        # Top level only: the body's two cv_step and one cv_check nest inside the WHILE.
        return {"kernel": 1, "conditional": 1}

    def bytes_needed(self, capacity: int) -> int:
        return 4 * capacity * (2 + self.degree) + 4 * _STATE_WORDS

    def setup(self, ctx: RunContext, capacity: int) -> None:
        self._capacity = int(capacity)
        self._max_rounds = max_rounds(self._capacity, self.components)
        self._seed = ctx.seed
        self._graph = label_graph(ctx.seed, self._capacity, self.components, self.degree)
        self._match = ctx.upload(self._graph.match)
        poison = np.full(self._capacity, 0xDEADBEEF, dtype=np.uint32)
        self._labels = (ctx.upload(poison), ctx.upload(poison))
        self._state = ctx.upload(np.full(_STATE_WORDS, 0xDEADBEEF, dtype=np.uint32))
        self._kernels = {name: ctx.kernel(FIXPOINT_SOURCE, name)
                         for name in ("cv_init", "cv_step", "cv_check", "cv_round")}
        self._cached = None

    def _step_args(self, n: int, forward: bool) -> tuple[object, ...]:
        assert self._labels is not None
        a, b = self._labels
        src, dst = (a, b) if forward else (b, a)
        return (src, dst, self._match, np.uint32(n), np.uint32(self._capacity),
                np.uint32(self.degree), np.uint32(self.components), self._state)

    def _check_n(self, n: int) -> None:
        if self._labels is None:
            raise RuntimeError("converge: used before setup()")
        if not 0 <= n <= self._capacity:
            raise ValueError(f"converge: n={n} does not fit capacity {self._capacity}")

    def build(self, builder: GraphBuilder, n: int) -> None:
        """cv_init -> WHILE { cv_step a->b, cv_step b->a, cv_check }."""
        self._check_n(n)
        assert self._labels is not None
        k, grid = self._kernels, grid_for(self._capacity)
        try:
            handle = builder.conditional_handle(default=1)
        except GraphcertError as exc:
            raise GraphcertError(UNSUPPORTED, hint=exc.one_line(), exit_code=2) from exc
        init = builder.add_kernel(k["cv_init"], grid, BLOCK, self._labels[0], np.uint32(n),
                                  self._state)
        try:
            _, body = builder.add_while(handle, deps=[init])
        except GraphcertError as exc:
            raise GraphcertError(UNSUPPORTED, hint=exc.one_line(), exit_code=2) from exc
        first = body.add_kernel(k["cv_step"], grid, BLOCK, *self._step_args(n, True))
        second = body.add_kernel(k["cv_step"], grid, BLOCK, *self._step_args(n, False),
                                 deps=[first])
        body.add_kernel(k["cv_check"], 1, 1, self._state, np.uint64(int(handle)),
                        np.uint32(self._max_rounds), deps=[second])

    def record(self, stream: Stream, n: int) -> None:
        """The eager twin of the WHILE loop: max_rounds fixed rounds (see module docstring)."""
        for launch in self._launches(n):
            launch.launch(stream)

    def _launches(self, n: int) -> list[PreparedLaunch]:
        self._check_n(n)
        if self._cached is not None and self._cached[0] == n:
            return self._cached[1]
        assert self._labels is not None
        k, grid = self._kernels, grid_for(self._capacity)
        launches = [k["cv_init"].prepare(grid, BLOCK, self._labels[0], np.uint32(n),
                                         self._state)]
        for _ in range(self._max_rounds):
            launches.append(k["cv_step"].prepare(grid, BLOCK, *self._step_args(n, True)))
            launches.append(k["cv_step"].prepare(grid, BLOCK, *self._step_args(n, False)))
            launches.append(k["cv_round"].prepare(1, 1, self._state))
        self._cached = (n, launches)
        return launches

    def outputs(self, n: int) -> dict[str, np.ndarray]:
        assert self._labels is not None and self._state is not None
        return {"labels": self._labels[0].download(np.uint32, n),
                "rounds": self._state.download(np.uint32, 1, offset=_ROUNDS_OFFSET)}

    def reference(self, n: int) -> dict[str, np.ndarray]:
        assert self._graph is not None
        labels, rounds = converge_reference_cached(self._seed, self._graph, n,
                                                   self._max_rounds)
        return {"labels": labels, "rounds": np.array([rounds], dtype=np.uint32)}

    def teardown(self) -> None:
        for buf in (*(self._labels or ()), self._match, self._state):
            if buf is not None:
                buf.free()
        self._labels = self._match = self._state = self._graph = None
        self._kernels = {}
        self._cached = None
