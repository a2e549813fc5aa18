"""Why a framework step's replay differs from its eager call at a sampled n: verify's causes
(graphcert.kinds.topology.causes), told apart by running the step a few more times. Runs only
for a sample that already failed, so a passing step sees no extra call.

In order:
1. moved memory: a pointer among the captured kernel parameters lies outside every live
   allocation (`moved_memory`, a check of the captured graph; see NO_MOVED_MEMORY);
2. padding dependence (n below the bucket): the same n replayed with the pad values and then
   with a poison (NaN for floating inputs, the real rows repeated for the others, or the
   step's own `poison`) gives other real rows;
3. stale capture: two eager calls at n with the same inputs differ, or with nothing padded
   (n = the bucket) the replay still differs from the eager call;
otherwise the cause is not found (the message says what was ruled out).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np

from graphcert.apicheck import as_tuple
from graphcert.cuda.handles import dangling_pointers_in
from graphcert.errors import GraphcertError, first_line
from graphcert.frameworks.compare import Kept, RowCompare, first_mismatch
from graphcert.frameworks.padding import Fill, describe, resolve
from graphcert.kinds.topology.causes import (
    Cause,
    moved_memory_reason,
    padding_reason,
    stale_reason,
    unexplained_reason,
)
from graphcert.model import GraphSnapshot
from graphcert.model.params import recorded_pointers

if TYPE_CHECKING:
    from graphcert.frameworks.adapters import Adapter, Captured
    from graphcert.frameworks.step import Step

# A dangling pointer among a captured graph's kernel parameters: (kernel node index in the
# snapshot's canonical order, parameter index).
Dangling = tuple[int, int]
MovedMemory = Callable[["Captured"], "Dangling | None"]


def no_moved_memory(captured: Captured) -> Dangling | None:
    """A moved-memory check that finds nothing (tests of the other causes)."""
    return None


NO_MOVED_MEMORY: MovedMemory = no_moved_memory


class PointerCheck:
    """The moved-memory check: the kernel pointers recorded when the bucket's graph was read
    (its snapshot, set by verify right after the capture, while every buffer was alive),
    each checked against the live allocations (cuMemGetAddressRange) when a replay that
    differs is explained; the first that no longer points where it did, as (node, param)."""

    def __init__(self) -> None:
        self.snapshot: GraphSnapshot | None = None

    def __call__(self, captured: Captured) -> Dangling | None:
        if self.snapshot is None or next(recorded_pointers(self.snapshot), None) is None:
            return None  # no pointer was recorded (a synthetic graph): nothing to ask
        found = dangling_pointers_in(self.snapshot)  # the framework's context, current
        return (found[0].node, found[0].param) if found else None


@dataclass(frozen=True)
class Explained:
    """A failing sample's cause and the words that say it, with the fix."""

    cause: Cause
    text: str


T = TypeVar("T")


class Timed(Protocol):
    """A phase timer: runs `fn`, charges its time to `phase`, returns what it returned."""

    def __call__(self, phase: str, fn: Callable[[], T]) -> T: ...


class CauseFinder:
    """Finds why a sample of a step failed, on the step's captured graph and static inputs.
    `timed(phase, fn)` charges each call to verify's phases (the run's breakdown)."""

    def __init__(self, step: Step, adapter: Adapter, rows: RowCompare,
                 timed: Timed,
                 moved_memory: MovedMemory = NO_MOVED_MEMORY) -> None:
        self.step = step
        self.adapter = adapter
        self.rows = rows
        self.timed = timed
        self.moved_memory = moved_memory

    def explain(self, captured: Captured, static: Sequence[object], capacity: int, n: int,
                values: Sequence[object], kept: Kept, pads: Sequence[Fill]) -> Explained:
        """The cause of a replay at n (inputs `values`, eager rows `kept`) that differed."""
        try:
            moved = self.moved_memory(captured)
            if moved is not None:
                return Explained(Cause.MOVED_MEMORY, moved_memory_reason(*moved))
            if n < capacity:
                poison = self._poison(values)
                if self._padding_matters(captured, static, n, values, pads, poison):
                    return Explained(Cause.PADDING, padding_reason(
                        capacity - n, describe(pads), describe(poison)))
            evidence = self._stale(captured, static, capacity, n, values, kept, pads)
            if evidence is not None:
                return Explained(Cause.STALE_CAPTURE, stale_reason(evidence))
            return Explained(Cause.UNEXPLAINED, unexplained_reason())
        except GraphcertError:
            raise
        except Exception as exc:  # the step's own code failed on a poison or a re-run
            return Explained(Cause.UNEXPLAINED, unexplained_reason(first_line(exc, typed=True)))

    def _poison(self, values: Sequence[object]) -> tuple[Fill, ...]:
        """The step's poison, or per input NaN (floating) or the real rows repeated."""
        auto = tuple(math.nan if self._floating(v) else None for v in values)
        declared = resolve(self.step.poison, len(values), "poison", None)
        return tuple(a if d is None else d for a, d in zip(auto, declared, strict=True))

    def _floating(self, value: object) -> bool:
        a = self.adapter
        return a.to_numpy(a.head(value, 0)).dtype.kind in "fc"

    def _replay(self, captured: Captured) -> None:
        def replay() -> None:
            captured.launch()
            self.adapter.synchronize()

        self.timed("replay", replay)

    def _replayed_rows(self, captured: Captured, static: Sequence[object], n: int,
                       values: Sequence[object], fills: Sequence[Fill]) -> list[np.ndarray]:
        """The rows of n after a replay with the padded rows holding `fills` (host copies:
        the next replay overwrites the graph's outputs)."""
        self.timed("pad", lambda: self.adapter.pad_into(static, values, n, fills))
        self._replay(captured)
        return self.timed("compare", lambda: [np.array(r, copy=True) for r in
                                              self.rows.host_rows(captured.outputs, n)])

    def _padding_matters(self, captured: Captured, static: Sequence[object], n: int,
                         values: Sequence[object], pads: Sequence[Fill],
                         poison: Sequence[Fill]) -> bool:
        padded = self._replayed_rows(captured, static, n, values, pads)
        poisoned = self._replayed_rows(captured, static, n, values, poison)
        return first_mismatch(poisoned, padded, self.step.rtol, self.step.atol) is not None

    def _stale(self, captured: Captured, static: Sequence[object], capacity: int, n: int,
               values: Sequence[object], kept: Kept, pads: Sequence[Fill]) -> str | None:
        """What shows the graph froze state the eager path changes, or None."""
        again = self.timed("eager", lambda: self.adapter.eager(self.step, values))
        if self.timed("compare", lambda: self.rows.mismatch(again, kept, n)) is not None:
            return f"two eager calls at n={n:,} with the same inputs give different rows"
        if n == capacity:
            return (f"with nothing padded (n={n:,}, the bucket's size) the replay differs from "
                    "the eager call")
        whole = self.timed("inputs", lambda: as_tuple(self.step.make_inputs(capacity)))
        want = self.timed("eager", lambda: self.adapter.eager(self.step, whole))
        kept_whole = self.timed("compare", lambda: self.rows.keep(want, capacity))
        self.timed("pad", lambda: self.adapter.pad_into(static, whole, capacity, pads))
        self._replay(captured)
        if self.timed("compare", lambda: self.rows.mismatch(captured.outputs, kept_whole,
                                                            capacity)) is not None:
            return (f"with nothing padded (n={capacity:,}, the bucket's size) the replay "
                    "still differs from the eager call")
        return None
