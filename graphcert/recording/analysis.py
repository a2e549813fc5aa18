"""A recording's analysis: one row per graph executable, dispatch coverage overall and in
steady state, the eager kernels of steady state grouped by name, and churn. Pure.

Steady state begins at the device start of the first kernel a graph launched (both sides of
the comparison are on CUPTI's device clock, so no host/device clock pairing is needed).

A graph launch is seen in one of two ways: its nodes' kernel records (graph_id set), or one
record of the whole launch (Launched with a device span: GRAPH_TRACE, what graphcert record
turns on, since a Python conversion of every graph kernel's record cost a serving loop more
than the loop itself). A launch timed whole counts the kernel nodes of its executable's graph
as its kernels (child graphs included; conditional bodies not, since how often a body ran is
not recorded) and its span as their device time.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from graphcert.model import GraphSnapshot, NodeKind
from graphcert.recording.events import KernelRun, Launched, Made, Recording
from graphcert.recording.regions import Regions, attribute

MAX_EAGER_GROUPS = 20  # the eager kernel names a certificate keeps (most launched first)


@dataclass(frozen=True)
class Coverage:
    """Kernels launched by graphs against kernels launched one by one (count, device ns)."""

    graph_kernels: int
    eager_kernels: int
    graph_ns: int
    eager_ns: int

    @property
    def kernels(self) -> int:
        return self.graph_kernels + self.eager_kernels

    @property
    def fraction(self) -> float | None:
        """Share of kernel launches made by graphs; None when no kernel ran."""
        return self.graph_kernels / self.kernels if self.kernels else None

    @property
    def time_fraction(self) -> float | None:
        """Share of kernel device time in kernels graphs launched; None without any."""
        total = self.graph_ns + self.eager_ns
        return self.graph_ns / total if total else None


@dataclass(frozen=True)
class EagerGroup:
    """Eager kernels of one name in steady state: how many and their device time."""

    name: str
    count: int
    total_ns: int


@dataclass(frozen=True)
class GraphRow:
    """One graph executable: how it was made, its topology, its launches and fate."""

    index: int  # order of instantiation, from 0
    made: Made
    at_ns: int  # instantiated, host ns since the recording began
    instantiate_ns: int
    capture_ns: int | None
    topology_hash: str | None  # None when the source graph could not be read
    shape_hash: str | None
    node_count: int | None
    launches: int
    device_ns_median: float | None  # one launch's span on the device; None: none timed
    device_ns_total: int
    updates: int
    failed_updates: int
    destroyed_at_ns: int | None  # None: alive when the recording ended
    snapshot_file: str | None = None  # beside the certificate (set when written)
    read_error: str | None = None
    pid: int | None = None


@dataclass(frozen=True)
class Churn:
    """One graph (same topology and launch shape) instantiated more often than executables of
    it were ever alive at once: made again after one like it was destroyed (or beside it).
    Buckets whose graphs share a shape are alive together, so they are not churn."""

    topology_hash: str
    shape_hash: str
    instantiations: int
    peak_alive: int  # the most executables of this graph alive at one time
    at_ns: tuple[int, ...]
    rows: tuple[int, ...]

    @property
    def per_graph(self) -> int:
        """Instantiations per executable slot: ceil(instantiations / peak_alive)."""
        return -(-self.instantiations // max(1, self.peak_alive))


@dataclass(frozen=True)
class Recorded:
    """The analysis of one recording."""

    graphs: tuple[GraphRow, ...]
    overall: Coverage
    steady: Coverage | None  # None: no graph kernel ran, so there is no steady state
    steady_eager: tuple[EagerGroup, ...]
    churn: tuple[Churn, ...]
    dropped_records: int = 0
    # the eager kernels of steady state (all of them where no graph ran) by NVTX region;
    # None only in a certificate written before graphcert attributed them
    regions: Regions | None = None


def coverage(kernels: Iterable[KernelRun], whole: Iterable[tuple[int, int]] = ()) -> Coverage:
    """Count and device time of graph-launched and eager kernels; `whole`: (kernels, device
    ns) of each graph launch timed as a whole."""
    gk = ek = gns = ens = 0
    for k in kernels:
        if k.graph_id:
            gk, gns = gk + 1, gns + k.duration_ns
        else:
            ek, ens = ek + 1, ens + k.duration_ns
    for count, ns in whole:
        gk, gns = gk + count, gns + ns
    return Coverage(gk, ek, gns, ens)


def kernels_in(snapshot: GraphSnapshot | None) -> int:
    """Kernel nodes one launch of `snapshot`'s graph runs for certain: its own and its child
    graphs' (not conditional bodies'); 0 for a graph that was not read."""
    if snapshot is None:
        return 0
    count = 0
    for node in snapshot.nodes:
        if node.kind is NodeKind.KERNEL:
            count += 1
        elif node.kind is NodeKind.GRAPH:
            count += sum(kernels_in(child) for child in node.children)
    return count


def eager_groups(kernels: Iterable[KernelRun], limit: int = MAX_EAGER_GROUPS
                 ) -> tuple[EagerGroup, ...]:
    """The eager kernels grouped by name, most launched first (then by name)."""
    count: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    for k in kernels:
        if not k.graph_id:
            count[k.name] += 1
            total[k.name] += k.duration_ns
    order = sorted(count, key=lambda n: (-count[n], n))[:limit]
    return tuple(EagerGroup(n, count[n], total[n]) for n in order)


def _spans(kernels: Sequence[KernelRun], launched: Sequence[Launched]) -> dict[int, int]:
    """Device span (first start to last end) of each graph launch, by correlation id: from
    its kernels' records, or the launch's own where it was timed whole."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for k in kernels:
        if k.graph_id and k.correlation_id:
            c = k.correlation_id
            first[c] = min(first.get(c, k.start_ns), k.start_ns)
            last[c] = max(last.get(c, k.end_ns), k.end_ns)
    spans = {c: last[c] - first[c] for c in first}
    spans.update((x.correlation_id, span) for x in launched
                 if (span := x.span_ns) is not None)
    return spans


def _peak_alive(rows: Sequence[GraphRow]) -> int:
    """The most of `rows` alive at one time (a destroy at the same instant comes first)."""
    events = sorted([(r.at_ns, 1) for r in rows]
                    + [(r.destroyed_at_ns, -1) for r in rows if r.destroyed_at_ns is not None])
    alive = peak = 0
    for _, step in events:
        alive += step
        peak = max(peak, alive)
    return peak


def churn_of(rows: Sequence[GraphRow]) -> tuple[Churn, ...]:
    """Graphs (topology and launch shape) instantiated more often than they were ever alive
    at once, in order of first instantiation."""
    same: dict[tuple[str, str], list[GraphRow]] = defaultdict(list)
    for r in rows:
        if r.topology_hash is not None:
            same[(r.topology_hash, r.shape_hash or "")].append(r)
    out = []
    for (topology, shape), rs in same.items():
        peak = _peak_alive(rs)
        if len(rs) > peak:
            out.append(Churn(topology, shape, len(rs), peak, tuple(r.at_ns for r in rs),
                             tuple(r.index for r in rs)))
    return tuple(out)


def analyse(rec: Recording) -> Recorded:
    """Rows, coverage, steady-state eager kernels and churn of a recording."""
    spans = _spans(rec.kernels, rec.launched)
    launches: dict[int, list[int]] = defaultdict(list)
    for launch in rec.launched:
        launches[launch.exec_key].append(launch.correlation_id)
    updates: dict[int, list[bool]] = defaultdict(list)
    for u in rec.updated:
        updates[u.exec_key].append(u.ok)
    destroyed = {d.exec_key: d.at_ns for d in rec.destroyed}
    rows = []
    for i, inst in enumerate(rec.instantiated):
        mine = launches.get(inst.exec_key, [])
        timed = [spans[c] for c in mine if c in spans]
        snap = inst.snapshot
        rows.append(GraphRow(
            i, inst.made, inst.at_ns, inst.instantiate_ns, inst.capture_ns,
            snap.topology_hash if snap else None, snap.shape_hash if snap else None,
            snap.node_count if snap else None, len(mine),
            float(statistics.median(timed)) if timed else None, sum(timed),
            len(updates.get(inst.exec_key, ())),
            sum(not ok for ok in updates.get(inst.exec_key, ())),
            destroyed.get(inst.exec_key),
            read_error=inst.read_error))
    # the first graph kernel's start, found once (a min() inside the filter below made this
    # quadratic: 8 s of a 3,000-step serve loop's 125k kernels on an H200)
    counts = {inst.exec_key: kernels_in(inst.snapshot) for inst in rec.instantiated}
    whole = [(x.start_ns or 0, counts.get(x.exec_key, 0), x.span_ns or 0)
             for x in rec.launched if x.span_ns is not None]
    steady_from = min([*(k.start_ns for k in rec.kernels if k.graph_id),
                       *(start for start, count, _ in whole if count)], default=None)
    steady_kernels = ([k for k in rec.kernels if k.start_ns >= steady_from]
                      if steady_from is not None else [])
    regions = attribute(steady_kernels if steady_from is not None else rec.kernels,
                        rec.markers, rec.launch_calls, rec.nvtx_unavailable)
    return Recorded(tuple(rows), coverage(rec.kernels, ((c, ns) for _, c, ns in whole)),
                    coverage(steady_kernels, ((c, ns) for s, c, ns in whole
                                              if s >= steady_from))
                    if steady_from is not None else None,
                    eager_groups(steady_kernels), churn_of(rows), rec.dropped_records,
                    regions)

