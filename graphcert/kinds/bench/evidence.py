"""A bench certificate's claims against its evidence: each figure within its samples' range,
placement medians, speedups and their intervals from the timings, break-even counts, the
throttle flag from the clock, the verdict no better than its sizes. Pure: no numpy (the
speedup bound mirrors graphcert.stats without importing it)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator, Mapping

from graphcert.cert.evidence import REL, Doc, close, fmt, stored_status, verdict_contradictions
from graphcert.cert.kind import KindResult
from graphcert.cert.results.figures import QUANTITIES, SIDES

# graphcert.stats.QUANTUM_S (one CUDA event quantum widens the device speedup interval);
# copied, not imported, since stats needs numpy and readers stay light. A test keeps them equal.
QUANTUM_S = {"device": 0.5e-6}
THROTTLE = 0.95  # run/bench.throttle_check: a clock below 95% of where it started


def contradictions(results: Doc, verdict: Doc, result: KindResult) -> list[str]:
    """Every way a bench certificate's results and verdict disagree."""
    return list(_bench(results, verdict, "results"))



def _bench(results: Doc, verdict: Doc, where: str) -> Iterator[str]:
    evidence: list[tuple[str, str]] = []
    for i, size in enumerate(results["sizes"]):
        yield from size_contradictions(size, f"{where}.sizes[{i}]")
        if size["throttled"]:
            evidence.append(("fail", f"size n={size['n']} is throttled"))
    other = results.get("other_context")
    if other is not None:
        inner = f"{where}.other_context"
        if "verdict" not in other:
            yield f"{inner} has no verdict"
        else:
            yield from _bench(other, other["verdict"], inner)
            status = stored_status(other["verdict"])
            if status != "pass":
                evidence.append((status, f"{inner}.verdict.status is {status!r}"))
    yield from verdict_contradictions(
        verdict, "verdict" if where == "results" else f"{where}.verdict", evidence)


def measured(doc: Doc | None) -> Doc | None:
    """A cold or hot figure that was measured (None for null or {"unavailable": ...})."""
    return doc if doc is not None and "median_s" in doc else None


def size_contradictions(size: Doc, where: str, label: str = "") -> Iterator[str]:
    label = label or f"size n={size['n']}"
    clock = size.get("clock_mhz")
    if clock is not None:
        dropped = clock["after"] < THROTTLE * clock["before"]
        if dropped is not size["throttled"]:
            yield (f"{label} says throttled={str(size['throttled']).lower()} but its SM clock "
                   f"went from {fmt(clock['before'])} to {fmt(clock['after'])} MHz")
    figures = {(side, q): measured(size[side].get(q)) for side in SIDES for q in QUANTITIES}
    hot = size.get("hot") or {}
    figures.update({(side, "hot_device"): measured(hot.get(side)) for side in SIDES})
    for (side, q), t in figures.items():
        if t is not None:
            at = f"{where}.hot.{side}" if q == "hot_device" else f"{where}.{side}.{q}"
            yield from _order(t, at)
    yield from _placements(size, figures, where)
    yield from _speedups(size, figures, label)
    yield from _break_even(size, figures, label)


def _order(t: Doc, where: str) -> Iterator[str]:
    lo, hi = t["min_s"], t["max_s"]
    for key in ("median_s", "mean_s"):
        if not lo * (1 - REL) <= t[key] <= hi * (1 + REL):
            yield (f"{where}.{key} is {fmt(t[key])} s, outside [min_s, max_s] = "
                   f"[{fmt(lo)}, {fmt(hi)}]")


def _placements(size: Doc, figures: Mapping[tuple[str, str], Doc | None],
                where: str) -> Iterator[str]:
    """Each spread's median and range from its medians, and the figure it is the median of."""
    for side, per in (size.get("placements") or {}).items():
        for q, spread in per.items():
            at, medians = f"{where}.placements.{side}.{q}", spread["medians_s"]
            mid = statistics.median(medians)
            spread_range = (max(medians) - min(medians)) / mid if mid > 0 else 0.0
            if not close(spread["median_s"], mid):
                yield f"{at}.median_s is {fmt(spread['median_s'])} but its medians give {fmt(mid)}"
            elif not close(spread["rel_range"], spread_range, 1e-6):
                yield (f"{at}.rel_range is {fmt(spread['rel_range'])} but its medians give "
                       f"{fmt(spread_range)}")
            figure = figures.get((side, q))
            if figure is not None and not close(figure["median_s"], mid):
                yield (f"{where} {side} {q} median_s is {fmt(figure['median_s'])} but the "
                       f"median over its placements is {fmt(mid)}")


def _speedup_range(size: Doc, s: Doc, g: Doc, q: str) -> tuple[float, float, float]:
    """(lowest, highest) median ratio the timings allow, and the highest interval bound.

    The reported median is median(stream samples) / median(graph samples) pooled over
    placements, which lies between the lowest and highest placement median of each side
    (exactly the figures' ratio with one placement). Its bootstrap bounds lie within
    min/max of the samples, widened by one timer quantum (graphcert.stats.speedup_interval).
    """
    spreads = size.get("placements") or {}
    ms = (spreads.get("stream") or {}).get(q)
    mg = (spreads.get("graph") or {}).get(q)
    if ms is not None and mg is not None:
        lo_s, hi_s = min(ms["medians_s"]), max(ms["medians_s"])
        lo_g, hi_g = min(mg["medians_s"]), max(mg["medians_s"])
    else:
        lo_s = hi_s = s["median_s"]
        lo_g = hi_g = g["median_s"]
    low = lo_s / hi_g if hi_g > 0 else 0.0
    high = hi_s / lo_g if lo_g > 0 else math.inf
    quantum = QUANTUM_S.get(q, 0.0)
    top = max(s["max_s"] / g["min_s"], high) if g["min_s"] > 0 else math.inf
    if quantum > 0:
        top *= (s["min_s"] + quantum) / s["min_s"] if s["min_s"] > 0 else math.inf
        top *= 3.0 if g["min_s"] < 1.5 * quantum else g["min_s"] / (g["min_s"] - quantum)
    return low, high, top


def _speedups(size: Doc, figures: Mapping[tuple[str, str], Doc | None],
              label: str) -> Iterator[str]:
    for q, iv in size["speedup"].items():
        if iv is None:
            continue
        s, g = figures[("stream", q)], figures[("graph", q)]
        if s is None or g is None:
            missing = "stream" if s is None else "graph"
            yield f"{label} has a {q} speedup but no {missing} {q} time"
            continue
        if not iv["low"] * (1 - REL) <= iv["median"] <= iv["high"] * (1 + REL):
            yield (f"{label} {q} speedup {fmt(iv['median'])}x lies outside its interval "
                   f"[{fmt(iv['low'])}, {fmt(iv['high'])}]")
            continue
        low, high, top = _speedup_range(size, s, g, q)
        if not low * (1 - REL) <= iv["median"] <= high * (1 + REL):
            gives = f"{fmt(low)}x" if close(low, high) else f"{fmt(low)}x to {fmt(high)}x"
            yield (f"{label} says {q} speedup {fmt(iv['median'])}x but its timings give "
                   f"{gives} (stream {fmt(s['median_s'])} s, graph {fmt(g['median_s'])} s)")
        elif iv["high"] > top * (1 + REL):
            yield (f"{label} says {q} speedup interval reaches {fmt(iv['high'])}x but its "
                   f"timings allow at most {fmt(top)}x")


def _break_even(size: Doc, figures: Mapping[tuple[str, str], Doc | None],
                label: str) -> Iterator[str]:
    """Up-front seconds over the end-to-end time a graph launch saves (run/bench)."""
    s, g = figures[("stream", "end_to_end")], figures[("graph", "end_to_end")]
    if s is None or g is None:
        return
    up = size["upfront"]
    setup = sum(up.get(k) or 0.0 for k in ("capture_s", "instantiate_s", "upload_s"))
    gain = s["median_s"] - g["median_s"]
    want = setup / gain if gain > 0 else None
    got = size["break_even_launches"]
    if (got is None) != (want is None) or (got is not None and want is not None
                                           and not close(got, want, 1e-6)):
        said = "null" if got is None else fmt(got)
        gives = "null (a graph launch saves nothing)" if want is None else fmt(want)
        yield f"{label} says break_even_launches {said} but its up-front and timings give {gives}"
