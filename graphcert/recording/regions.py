"""Eager kernels attributed to the NVTX ranges the program pushed (`torch.cuda.nvtx.range`,
CuPy's, `nvtx`), so a fallback to eager is named by the region of code that made it. Pure.

A range is a START marker and the END marker of the same id; it belongs to the thread that
started it. An eager kernel is joined by correlation id to the host call that launched it
(thread, time), and its region is the path of the ranges open on that thread at that time,
outermost first ("decode > attention"), or OUTSIDE when none was open. One sweep per thread
over range edges and calls in time order, so a long run's many ranges and launches cost
O((R + N) log(R + N)), not R x N.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from graphcert.recording.events import KernelRun, LaunchCall, Marker, MarkerEdge

OUTSIDE = "(outside every NVTX range)"
UNJOINED = "(launch call not recorded)"
MAX_REGIONS = 20  # the regions a certificate keeps (most launches first)


@dataclass(frozen=True)
class NvtxRange:
    """One range on one thread, host ns; `end_ns` None: still open when recording ended."""

    name: str
    thread_id: int
    start_ns: int
    end_ns: int | None


@dataclass(frozen=True)
class EagerRegion:
    """Eager kernels of steady state launched inside one NVTX range path."""

    region: str
    count: int
    total_ns: int


@dataclass(frozen=True)
class Regions:
    """Steady-state eager kernels by NVTX region; `unavailable` says why there are none to
    show (no NVTX routed to CUPTI, or no range reached it)."""

    ranges: int
    groups: tuple[EagerRegion, ...]
    unavailable: str | None = None


NO_RANGES = ("no NVTX range reached CUPTI (the program pushed none, or its NVTX started "
             "before the recording did)")


def ranges_of(markers: Iterable[Marker]) -> tuple[NvtxRange, ...]:
    """The ranges the markers delimit, by start; a START without an END stays open."""
    opened: dict[int, Marker] = {}
    out: list[NvtxRange] = []
    for m in sorted(markers, key=lambda m: (m.at_ns, m.edge is not MarkerEdge.END)):
        if m.edge is MarkerEdge.START:
            opened[m.marker_id] = m
        elif m.edge is MarkerEdge.END and (s := opened.pop(m.marker_id, None)) is not None:
            out.append(NvtxRange(s.name, s.thread_id, s.at_ns, m.at_ns))
    out += [NvtxRange(s.name, s.thread_id, s.at_ns, None) for s in opened.values()]
    return tuple(sorted(out, key=lambda r: (r.start_ns, r.thread_id)))


def regions_of_calls(ranges: Sequence[NvtxRange], calls: Sequence[LaunchCall]
                     ) -> dict[int, str]:
    """Correlation id -> region path of each launch call (OUTSIDE when none is open)."""
    events: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    # at one instant: a range opens before a call is placed and closes after it (inclusive)
    for i, r in enumerate(ranges):
        events[r.thread_id].append((r.start_ns, 0, i))
        if r.end_ns is not None:
            events[r.thread_id].append((r.end_ns, 2, i))
    for j, c in enumerate(calls):
        events[c.thread_id].append((c.at_ns, 1, j))
    out: dict[int, str] = {}
    for thread_events in events.values():
        active: dict[int, None] = {}  # open ranges in order of opening
        for _, what, index in sorted(thread_events):
            if what == 0:
                active[index] = None
            elif what == 2:
                active.pop(index, None)
            else:
                path = " > ".join(ranges[i].name for i in active)
                out[calls[index].correlation_id] = path or OUTSIDE
    return out


def attribute(kernels: Iterable[KernelRun], markers: Sequence[Marker],
              calls: Sequence[LaunchCall], unavailable: str | None) -> Regions:
    """The eager ones of `kernels` grouped by the NVTX region their launch was made in."""
    if unavailable is not None:
        return Regions(0, (), unavailable)
    ranges = ranges_of(markers)
    if not ranges:
        return Regions(0, (), NO_RANGES)
    where = regions_of_calls(ranges, calls)
    count: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    for k in kernels:
        if not k.graph_id:
            region = where.get(k.correlation_id, UNJOINED)
            count[region] += 1
            total[region] += k.duration_ns
    order = sorted(count, key=lambda r: (-count[r], r))[:MAX_REGIONS]
    return Regions(len(ranges), tuple(EagerRegion(r, count[r], total[r]) for r in order))


__all__ = ["MAX_REGIONS", "NO_RANGES", "OUTSIDE", "UNJOINED", "EagerRegion", "NvtxRange",
           "Regions", "attribute", "ranges_of", "regions_of_calls"]
