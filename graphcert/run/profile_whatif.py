"""What-if attribution of one profiled class on the GPU (graphcert.kinds.profile.whatif says
what the figures are): an executable graph of its own instantiated from the read graph (so a
framework's graph is handled as graphcert's own, no framework exec handle needed), warmed,
the baseline timed, then each chosen node disabled and enabled in turn, its pairs of held
replays timed on the class's harness (Harness.held_sample, the one device time of a replay).
Runs after the traced replays, with no tracer on.

Bounded: the top `settings.what_if` kernel, memcpy and memset nodes by traced median, and at
most `settings.what_if_budget_s` wall seconds per class; nodes not reached are counted."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from graphcert.cuda.stream import Stream
from graphcert.errors import CudaError
from graphcert.kinds.profile.whatif import (
    NodeContribution,
    WhatIf,
    contribution,
    ranked_nodes,
    selection_text,
)
from graphcert.orderstats import median_interval
from graphcert.profiling import Profile
from graphcert.run.harness import Harness, QueueUnavailable
from graphcert.run.profile_trace import WARMUP, ProfileSettings, ReadGraph, instantiate_again

OFF = "off (--what-if 0)"


class _Exec(Protocol):
    """What what-if needs of an executable graph (graphcert.cuda.graph.GraphExec)."""

    def launch(self, stream: Stream) -> None: ...
    def set_node_enabled(self, node: int, enabled: bool) -> None: ...
    def destroy(self) -> None: ...


def attribute(read: ReadGraph, harness: Harness, profile: Profile, settings: ProfileSettings
              ) -> tuple[WhatIf | None, str | None]:
    """(what_if, what_if_reason) of one class: the attribution, or None and why it did not
    run (off, no graph to instantiate, the driver refused, the held launches unavailable)."""
    if settings.what_if == 0:
        return None, OFF
    exe, why = instantiate_again(read)
    if exe is None:
        return None, why
    try:
        return what_if(read, harness, exe, ranked_nodes(profile), settings), None
    except QueueUnavailable as exc:
        harness.stream.synchronize()
        return None, f"held replays unavailable: {exc}"
    except CudaError as exc:
        return None, f"the driver refused: {exc.call} gave {exc.name}"


def what_if(read: ReadGraph, harness: Harness, exe: _Exec, nodes_by_traced_time: Sequence[int],
            settings: ProfileSettings, *, clock: Callable[[], float] = time.monotonic,
            warmup: int = WARMUP) -> WhatIf:
    """Attribute the first `settings.what_if` of `nodes_by_traced_time` (canonical indices of
    disableable nodes, longest traced first) within the budget (see the module), on `exe`,
    an executable of the read graph of what-if's own, destroyed at the end."""
    handles = {index: handle for handle, index in read.positions.items()}
    ops = read.snapshot.node_count
    t0 = clock()
    try:
        def held_ns() -> float:
            return harness.held_sample(lambda s: exe.launch(s), ops).device_s * 1e9

        for _ in range(warmup):
            exe.launch(harness.stream)
        harness.stream.synchronize()
        low, base, high = median_interval([held_ns() for _ in range(settings.what_if_pairs)])
        chosen = list(nodes_by_traced_time[:settings.what_if])
        done: list[NodeContribution] = []
        for index in chosen:
            if clock() - t0 > settings.what_if_budget_s:
                break
            done.append(_node(exe, handles[index], index, held_ns, settings.what_if_pairs))
    finally:
        exe.destroy()
    selection = selection_text(len(done), len(nodes_by_traced_time), settings.what_if,
                               len(chosen) - len(done), settings.what_if_budget_s)
    return WhatIf(base, low, high, tuple(done), selection, len(nodes_by_traced_time) - len(done))


def _node(exe: _Exec, handle: int, index: int, held_ns: Callable[[], float],
          pairs: int) -> NodeContribution:
    """Node `index`'s pairs: enabled then disabled on even pairs, disabled then enabled on odd
    ones (a drift between the two cancels); the node enabled again whatever fails."""
    enabled: list[float] = []
    disabled: list[float] = []
    try:
        for i in range(pairs):
            for on in ((True, False) if i % 2 == 0 else (False, True)):
                exe.set_node_enabled(handle, on)
                (enabled if on else disabled).append(held_ns())
    finally:
        exe.set_node_enabled(handle, True)
    return contribution(index, enabled, disabled)


__all__ = ["OFF", "attribute", "what_if"]
