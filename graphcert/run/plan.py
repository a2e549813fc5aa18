"""`plan` of a framework step (issue 35): measure its cost per candidate bucket size with
bench's step machinery, then let graphcert.plan choose the bucket list for a traffic mix.

Measuring is `bench_step` run over the candidate sizes (one capture and one timing per size,
graphcert's harness on the framework's stream), each SizeResult turned into a CostPoint:
replay = the graph's queued device median, eager = the eager call's queued device median at
the same size, capture = capture + instantiate seconds, pool bytes = what the framework says
its graph pool holds (0 where it says nothing). A step whose call waits on the host has no
queued device figure; then every point uses end-to-end medians instead (one basis for the
whole curve, said in the plan's `why`). Sizes between measured candidates are interpolated by
graphcert.plan.costs (linear, marked `measured` False), never measured twice.

Candidate grid: every bucket of vllm:MAX and sglang:MAX, every compared list's bucket and
every traffic size, up to MAX (--max-size, default the traffic's largest batch). Thinned where
the cost is flat: the smallest, the largest and the powers of two among them are measured
first; a gap between two measured neighbours is split (its middle candidate measured) while
their replay or eager times differ by more than FLAT, and interpolated once they do not. At
most MAX_MEASURED sizes are measured (the steepest gaps split first); steep gaps left then
are interpolated too, and the plan's `why` says how many. One harness serves every round.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from graphcert.cert.results.figures import Timing
from graphcert.errors import InputError
from graphcert.fileio import ensure_writable_dir
from graphcert.frameworks.adapters import Adapter, Captured
from graphcert.frameworks.step import Step
from graphcert.kinds.bench.result import SizeResult
from graphcert.kinds.plan.result import PlanResult, plan_result, traffic_digest
from graphcert.options import Options
from graphcert.plan.costs import Budgets, CostCurve, CostPoint
from graphcert.plan.evaluate import bucket_list, evaluate
from graphcert.plan.optimise import TOLERANCE, Infeasible, choose
from graphcert.plan.traffic import Traffic, load_traffic
from graphcert.run import environment, steps_bench
from graphcert.run.harness import BenchSettings
from graphcert.run.runnable import runnable
from graphcert.run.steps import open_adapter
from graphcert.run.steps_bench import StepHarness, bench_step
from graphcert.workloads.registry import load, parse_ref

# Two measured neighbours whose replay and eager times are within this relative difference
# count as flat: the candidates between them are interpolated, not measured.
FLAT = 0.05
# At most this many sizes measured per plan (about 1.5 s each for torch_decode on an H100):
# a curve that stays steep everywhere (a kernel choice that jumps at many sizes) would
# otherwise measure every candidate. Steep gaps left then are interpolated, and said so.
MAX_MEASURED = 64
PRESETS = ("vllm", "sglang")  # compared by default, at MAX
# bench's step timing without the hot figure (back to back, L2 warm), which the cost curve
# does not use: a measured size then costs six figures, not eight (about 1.5 s on an H100
# for torch_decode, where bench's eight took about 1.9 s: benchmarks/NOTES.md).
PLAN_SETTINGS = BenchSettings(hot=False)
OpenHarness = Callable[[Adapter, BenchSettings, int], tuple[StepHarness, Callable[[], None]]]


class _PoolRecorder:
    """The step's adapter, noting each capture's pool bytes in order (bench_step's result
    does not carry them); everything else passes through."""

    def __init__(self, adapter: Adapter) -> None:
        self._adapter = adapter
        self.pools: list[int] = []

    def capture(self, step: Step, static: Sequence[Any]) -> Captured:
        captured = self._adapter.capture(step, static)
        self.pools.append(int(captured.pool_bytes or 0))
        return captured

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)


def _median(value: object) -> float | None:
    return value.median_s if isinstance(value, Timing) else None


def _points(rows: Sequence[SizeResult], pools: Sequence[int], queued: bool) -> list[CostPoint]:
    """CostPoints of bench rows: queued device medians, or end-to-end ones."""
    out = []
    for row, pool in zip(rows, pools, strict=True):
        if queued:
            replay, eager = _median(row.graph.device), _median(row.stream.device)
            assert replay is not None and eager is not None  # checked by the caller
        else:
            replay, eager = row.graph.end_to_end.median_s, row.stream.end_to_end.median_s
        setup = (row.upfront.capture_s or 0.0) + (row.upfront.instantiate_s or 0.0)
        out.append(CostPoint(row.capacity, replay, eager, setup, pool))
    return out


def _keep_open() -> None:
    """bench_step's close of a borrowed harness: measure_curve closes it after the last round."""


def thin_next(measured: Sequence[CostPoint], candidates: Sequence[int],
              limit: int | None = None) -> list[int]:
    """The candidates to measure next: the middle one of each gap between two measured
    neighbours whose replay or eager times differ by more than FLAT; with `limit`, only the
    middles of the `limit` steepest such gaps. Ascending."""
    wanted = []
    for lo, hi in zip(measured, measured[1:], strict=False):
        inside = [c for c in candidates if lo.size < c < hi.size]
        steep = max(abs(b - a) / max(a, b, 1e-30) for a, b in
                    ((lo.replay_s, hi.replay_s), (lo.eager_s, hi.eager_s)))
        if inside and steep > FLAT:
            wanted.append((steep, inside[len(inside) // 2]))
    if limit is not None:
        wanted = sorted(wanted, reverse=True)[:max(limit, 0)]
    return sorted(size for _, size in wanted)


def first_round(candidates: Sequence[int]) -> list[int]:
    """The smallest, the largest and the powers of two among the candidates."""
    ends = {candidates[0], candidates[-1]}
    return sorted(ends | {c for c in candidates if c & (c - 1) == 0})


def measure_curve(step: Step, ref: str, candidates: Sequence[int], settings: BenchSettings, *,
                  device: int = 0, open_harness: OpenHarness | None = None,
                  adapter: Adapter | None = None, max_measured: int = MAX_MEASURED,
                  must: Sequence[int] = ()) -> tuple[CostCurve, str]:
    """The step's cost curve over the candidate sizes (ascending, distinct), thinned where
    flat, and how it was made: the timing basis ("queued device medians" or "end to end
    medians"), and where `max_measured` stopped the thinning, how many steep gaps it left.
    Every candidate is a point: measured, or interpolated between its measured neighbours
    (marked so). The first round (ends, powers of two and the sizes in `must`: the
    compared lists' buckets, so they are judged on measurements too) is always measured."""
    _, grid = bucket_list(list(candidates))
    if not grid:
        raise InputError("no candidate bucket size to measure", hint="give at least one size")
    recorder = _PoolRecorder(adapter or open_adapter(step, device))
    rows: dict[int, SizeResult] = {}
    pools: dict[int, int] = {}
    todo = sorted(set(first_round(grid)) | {c for c in must if c in grid})
    queued = True
    # One harness for every round (its kernels, L2 flush buffer and events made once), on
    # the framework's stream; each round's bench_step borrows it and leaves it open.
    recorder.prepare()  # the framework's device set-up first, as bench_step orders it
    opener = open_harness or steps_bench.framework_harness
    h, close = opener(cast(Adapter, recorder), settings, device)
    try:
        while todo:
            before = len(recorder.pools)
            result = bench_step(step, ref, todo, settings, adapter=cast(Adapter, recorder),
                                device=device, open_harness=lambda *_: (h, _keep_open))
            for row, pool in zip(result.sizes, recorder.pools[before:], strict=True):
                rows[row.capacity], pools[row.capacity] = row, pool
            queued = all(_median(r.graph.device) is not None and _median(r.stream.device)
                         is not None for r in rows.values())
            done = sorted(rows)
            todo = thin_next(_points([rows[s] for s in done], [pools[s] for s in done],
                                     queued), grid, limit=max_measured - len(rows))
    finally:
        close()
    done = sorted(rows)
    points = _points([rows[s] for s in done], [pools[s] for s in done], queued)
    curve = CostCurve(tuple(CostCurve(tuple(points)).at(c) for c in grid))
    how = "queued device medians" if queued else "end to end medians"
    left = len(thin_next(points, grid))
    if left:
        how += (f" (measuring stopped at {len(rows)} sizes, the most a plan measures: "
                f"{left} gap(s) still steeper than {FLAT:.0%} interpolated)")
    return curve, how


@dataclass(frozen=True)
class PlanRequest:
    """What `graphcert plan` asks: the step, the traffic file, the budgets (max_size None:
    the traffic's largest batch), the lists to compare (label, text) and the current one."""

    ref: str
    traffic: Path
    budgets: Budgets
    compare: tuple[str, ...] = ()
    current: str | None = None
    tolerance: float = TOLERANCE


@dataclass(frozen=True)
class PlannedStep:
    """The plan, the reference its certificate carries, and where it was written."""

    ref: str
    result: PlanResult
    certificate: Path | None = None


def traffic_ref(ref: str, traffic: Traffic) -> str:
    """The step's reference with the traffic's digest as option `traffic`
    (`STEP[traffic=sha256-<12 hex>]`): the gate keys certificates by kind, reference and GPU,
    so two plans of one step for two traffic mixes stay apart. The prefix keeps the value
    text (a digest of digits only would parse as an integer)."""
    parsed = parse_ref(ref)
    if any(k == "traffic" for k, _ in parsed.options):
        raise InputError(f"{ref} already has an option 'traffic'; plan adds it itself",
                         hint="give the step without a traffic option")
    options = [f"{k}={v}" for k, v in parsed.options]
    options.append(f"traffic=sha256-{traffic_digest(traffic)[:12]}")
    return f"{parsed.target}[{','.join(options)}]"


def _lists(request: PlanRequest, max_size: int) -> list[tuple[str, tuple[int, ...]]]:
    """The compared lists (the presets at MAX, the user's, the current one labelled
    "current"), each within max_size."""
    texts = [(f"{p}:{max_size}", f"{p}:{max_size}") for p in PRESETS]
    texts += [(t.strip(), t) for t in request.compare]
    if request.current is not None:
        texts.append(("current", request.current))
    out: list[tuple[str, tuple[int, ...]]] = []
    for label, text in texts:
        _, buckets = bucket_list(text)
        if buckets and buckets[-1] > max_size:
            raise InputError(f"list {label} has bucket {buckets[-1]:,} above max_size "
                             f"{max_size:,}", hint="raise --max-size or shorten the list")
        if label in {seen for seen, _ in out} or label == "plan":
            raise InputError(f"list {label} is compared twice", hint="give each list once")
        out.append((label, buckets))
    return out


def candidate_grid(traffic: Traffic, max_size: int,
                   lists: Sequence[tuple[str, tuple[int, ...]]]) -> list[int]:
    """Every size a list or the traffic could use, up to max_size, ascending."""
    sizes = set(traffic.sizes) | {b for _, buckets in lists for b in buckets}
    return sorted(s for s in sizes if 1 <= s <= max_size)


def plan_step(request: PlanRequest, settings: BenchSettings, *, device: int = 0,
              out_dir: Path | None = None, options: Options,
              open_harness: OpenHarness | None = None) -> PlannedStep:
    """Load the step and the traffic (bad input fails before any GPU work), measure the
    cost curve, choose the list within the budgets, compare it with the presets and the
    user's lists, and with `out_dir` write the plan certificate (signed with
    `options.signing_key`)."""
    loaded = load(request.ref)
    step = runnable(loaded).plan_target()  # Refused (one line) for a built-in workload
    budgets = request.budgets
    traffic = load_traffic(request.traffic, max_size=budgets.max_size)
    max_size = budgets.max_size or traffic.largest
    budgets = dataclasses.replace(budgets, max_size=max_size)
    lists = _lists(request, max_size)
    ref = traffic_ref(loaded.ref, traffic)
    if out_dir is not None:
        ensure_writable_dir(out_dir)
    grid = candidate_grid(traffic, max_size, lists)
    curve, how = measure_curve(step, loaded.ref, grid, settings, device=device,
                               open_harness=open_harness,
                               must=sorted({b for _, buckets in lists for b in buckets}))
    # Buckets only where measured: an interpolated size is no evidence (cuBLAS picks other
    # kernels per size; on an H100 torch_decode's sizes between powers of two read up to 6% above
    # the line between them), so it serves traffic as a cost but is never chosen as a bucket.
    measured_sizes = [p.size for p in curve.points if p.measured]
    plan = choose(traffic, curve, budgets, candidates=measured_sizes,
                  tolerance=request.tolerance)
    if isinstance(plan, Infeasible):
        raise plan.error()
    measured = sum(p.measured for p in curve.points)
    # "candidate" means a bucket the search may choose (the measured sizes, counted in
    # plan.why); the other curve sizes serve traffic with interpolated costs only
    plan = dataclasses.replace(plan, why=f"{plan.why}; costs: {how}, {measured} of "
                                         f"{len(grid)} size(s) measured, the others "
                                         f"interpolated")
    rows = [evaluate(buckets, traffic, curve, budgets, label=label) for label, buckets in lists]
    result = plan_result(plan, curve, traffic, rows)
    path = None
    if out_dir is not None:
        env = environment.environment(device, options.git)
        tagged = dataclasses.replace(loaded, ref=ref)  # identity and name carry the traffic
        path = environment.write(result, out_dir, environment.subject(tagged, "plan"), env,
                                 key=options.signing_key, uuid_names=options.uuid_names)
    return PlannedStep(ref, result, path)


__all__ = ["FLAT", "MAX_MEASURED", "PLAN_SETTINGS", "PlanRequest", "PlannedStep",
           "candidate_grid", "first_round", "measure_curve", "plan_step", "thin_next",
           "traffic_ref"]
