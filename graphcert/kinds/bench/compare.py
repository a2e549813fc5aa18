"""Two bench certificates compared timing by timing, with nvbench-compare interval logic
(graphcert.cert.compare.compare_timing). Pure; used by the gate and by diff."""

from __future__ import annotations

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import (
    Change,
    ResultsDiff,
    TimingComparison,
    across_models,
    compare_timing,
)
from graphcert.cert.results.figures import QUANTITIES, SIDES
from graphcert.kinds.bench.result import BenchResult


def diff_results(a: Certificate, b: Certificate, *, min_noise: float) -> ResultsDiff:
    """Every timing of sizes both hold; a warning when they come from two GPU models."""
    ra, rb = a.result, b.result
    assert isinstance(ra, BenchResult) and isinstance(rb, BenchResult)
    found, notes = compare_bench(ra, rb, min_noise=min_noise)
    models = across_models(a, b)
    # shown, as diff shows what it is given, but never unflagged
    warnings = (f"these bench certificates are {models} (the gate would not compare them)",
                ) if models is not None else ()
    return ResultsDiff(timings=tuple(found), notes=tuple(notes), warnings=warnings)


def compare_bench(baseline: BenchResult, current: BenchResult, *,
                  min_noise: float = 0.005) -> tuple[list[TimingComparison], list[str]]:
    """Every timing of sizes both results hold; notes for what could not be compared."""
    notes: list[str] = []
    base_sizes = {s.n: s for s in baseline.sizes}
    cur_sizes = {s.n: s for s in current.sizes}
    out: list[TimingComparison] = []
    for n in sorted(set(base_sizes) | set(cur_sizes)):
        if n not in cur_sizes or n not in base_sizes:
            notes.append(f"n={n} only in the {'baseline' if n in base_sizes else 'current'}")
            continue
        bs, cs = base_sizes[n], cur_sizes[n]
        throttled = bs.throttled or cs.throttled
        for side in SIDES:
            for q in QUANTITIES:
                bt, ct = bs.way(side).get(q), cs.way(side).get(q)
                if bt is None or ct is None:
                    # missing on one side only is news; on both, nothing was lost
                    if q == "device" and (bt is not None or ct is not None):
                        notes.append(f"n={n} {side} device time unavailable on "
                                     f"{'the baseline' if bt is None else 'current'}")
                    continue
                diff, thr, change, why = compare_timing(bt, ct, min_noise=min_noise)
                if throttled and change in (Change.SLOWER, Change.FASTER):
                    change, why = Change.AMBIGUOUS, "GPU clocks throttled"
                out.append(TimingComparison(n, side, q, bt.median_s, ct.median_s, diff, thr,
                                            change, why))
    return out, notes
