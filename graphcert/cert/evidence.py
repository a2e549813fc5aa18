"""A certificate's claims held against its own evidence. Pure: no numpy, no CUDA.

The schema says each field is well typed; this says the fields agree. Every verdict and
derived figure a certificate records is recomputed from the evidence beside it, the way
graphcert computed it: a class marked pass has only passing samples, a verdict is no better
than its classes or sizes and `passed` matches `status`, a speedup is what its timings give,
a break-even count and a placement median are what their inputs give, a sweep's fit is the
line through its points. `contradictions` names each disagreement with both values;
`check_document` refuses a certificate that has one (exit 2), so no reader silently takes
one side of it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from graphcert.cert.planevidence import plan_contradictions

QUANTITIES = ("host_enqueue", "device", "end_to_end")
SIDES = ("stream", "graph")
CHECKS = ("topology_equal", "shape_equal", "output_equal", "param_update_output_equal",
          "node_count_matches_prediction")
# graphcert.stats.QUANTUM_S (one CUDA event quantum widens the device speedup interval);
# copied, not imported, since stats needs numpy and readers stay light. A test keeps them equal.
QUANTUM_S = {"device": 0.5e-6}
THROTTLE = 0.95  # run/bench.throttle_check: a clock below 95% of where it started
REL = 1e-9  # float rounding between the way graphcert computed a figure and this
_RANK = {"pass": 0, "incomplete": 1, "fail": 2}

Doc = Mapping[str, Any]


def contradictions(cert: Doc) -> list[str]:
    """Every way a (schema-valid) certificate's claims disagree with its evidence."""
    results, verdict = cert["results"], cert["verdict"]
    if cert["kind"] == "topology":
        return list(_topology(results, verdict))
    if cert["kind"] == "bench":
        return list(_bench(results, verdict, "results"))
    if cert["kind"] == "plan":
        return list(plan_contradictions(results, verdict, _RANK))
    if cert["kind"] == "profile":  # issue 31
        from graphcert.cert.profileevidence import profile_contradictions

        return list(profile_contradictions(results, verdict, _RANK))
    if cert["kind"] == "record":  # issue 32
        from graphcert.cert.results.record import record_contradictions

        return record_contradictions(results, verdict)
    return list(_sweep(results, verdict))


# ------------------------------------------------------------------------------ verdicts

def _status(verdict: Doc) -> str:
    """The stored status; certificates written before it existed hold only `passed`."""
    status = verdict.get("status")
    return str(status) if status is not None else "pass" if verdict["passed"] else "fail"


def _verdict(verdict: Doc, where: str, evidence: Sequence[tuple[str, str]]) -> Iterator[str]:
    """`passed` against `status`, and the status against the worst the evidence shows. A
    verdict without `status` was written before graphcert judged a skipped class or an
    unread clock incomplete: only failing evidence contradicts its pass (the gate reads it
    as incomplete: graphcert.cert.certificate.judged_verdict)."""
    status = verdict.get("status")
    if status is not None and verdict["passed"] is not (status == "pass"):
        yield (f"{where}.passed is {str(verdict['passed']).lower()} but {where}.status is "
               f"{status!r}")
    if status is None:
        evidence = [e for e in evidence if e[0] == "fail"]
    stored = _status(verdict)
    worst = max(evidence, key=lambda e: _RANK[e[0]], default=None)
    if worst is not None and _RANK[worst[0]] > _RANK[stored]:
        said = f"{where}.status says {stored!r}" if status is not None else \
            f"{where}.passed is true"
        yield f"{said} but {worst[1]}"


def _close(a: float, b: float, rel: float = REL) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-300


def _g(x: float) -> str:
    return f"{x:.6g}"


# ------------------------------------------------------------------------------ topology

def _topology(results: Doc, verdict: Doc) -> Iterator[str]:
    classes = results["classes"]
    evidence: list[tuple[str, str]] = []
    previous: int | None = None
    for i, c in enumerate(classes):
        cap = c["capacity"]
        if previous is not None and cap <= previous:
            yield (f"results.classes[{i}]: class {cap} follows class {previous}; classes are "
                   f"distinct and ascending")
        previous = cap
        if c["status"] == "fail":
            evidence.append(("fail", f"class {cap} has status 'fail'"))
        elif c["status"] == "skipped":
            evidence.append(("incomplete", f"class {cap} was skipped"))
        yield from _class(c)
    yield from _transitions(classes, results["transitions"])
    yield from _verdict(verdict, "verdict", evidence)


def _class(c: Doc) -> Iterator[str]:
    cap, samples = c["capacity"], c["samples"]
    name = f"class {cap}"
    for s in samples:
        if s["n"] > cap:
            yield f"{name} has sample n={s['n']}, above its capacity"
    if c["node_count"] is not None and c["node_count"] != sum(c["counts"].values()):
        yield (f"{name} has node_count {c['node_count']} but its counts add up to "
               f"{sum(c['counts'].values())}")
    waste = c["padding_waste"]
    if samples and waste:
        ns = [s["n"] for s in samples]
        want = {"min": cap - max(ns), "max": cap - min(ns)}
        if {k: waste.get(k) for k in want} != want:
            yield (f"{name} has padding_waste {dict(waste)} but its samples give {want}")
    if c["status"] != "pass":
        return
    if not samples:
        yield f"{name} says pass but has no samples"
    for s in samples:
        for check in CHECKS:
            if s[check] is False:
                yield f"{name} says pass but sample n={s['n']} has {check}=false"
        if s["update"] is not None and s["update"]["result"] != "success":
            yield (f"{name} says pass but sample n={s['n']} has update result "
                   f"{s['update']['result']!r}")
        if s["error"] is not None:
            yield f"{name} says pass but sample n={s['n']} has an error"
    predicted = c["predicted"]
    if predicted is not None:
        off = sorted(k for k, v in predicted.items() if c["counts"].get(k, 0) != v)
        if off:
            k = off[0]
            yield (f"{name} says pass but its {k} count {c['counts'].get(k, 0)} differs from "
                   f"the predicted {predicted[k]}")


def _transitions(classes: Sequence[Doc], transitions: Sequence[Doc]) -> Iterator[str]:
    """Class to class changes, as verify derives them from the fingerprints of the classes
    that have a graph (run/verify.transitions)."""
    done = [c for c in classes if c["topology_hash"] is not None]
    want = [(a["capacity"], b["capacity"],
             "topology" if a["topology_hash"] != b["topology_hash"] else
             "launch shape" if a["shape_hash"] != b["shape_hash"] else "parameters only")
            for a, b in zip(done, done[1:], strict=False)]
    got = [(t["from"], t["to"], t["change"]) for t in transitions]
    if got != want:
        first = next((i for i, (g, w) in enumerate(zip(got, want, strict=False)) if g != w),
                     min(len(got), len(want)))
        said = got[first] if first < len(got) else "nothing"
        gives = want[first] if first < len(want) else "nothing"
        yield f"results.transitions[{first}] says {said} but the class fingerprints give {gives}"


# --------------------------------------------------------------------------------- bench

def _bench(results: Doc, verdict: Doc, where: str) -> Iterator[str]:
    evidence: list[tuple[str, str]] = []
    for i, size in enumerate(results["sizes"]):
        yield from _size(size, f"{where}.sizes[{i}]")
        if size["throttled"]:
            evidence.append(("fail", f"size n={size['n']} is throttled"))
    other = results.get("other_context")
    if other is not None:
        inner = f"{where}.other_context"
        if "verdict" not in other:
            yield f"{inner} has no verdict"
        else:
            yield from _bench(other, other["verdict"], inner)
            status = _status(other["verdict"])
            if status != "pass":
                evidence.append((status, f"{inner}.verdict.status is {status!r}"))
    yield from _verdict(verdict, "verdict" if where == "results" else f"{where}.verdict",
                        evidence)


def _timing(doc: Doc | None) -> Doc | None:
    """A cold or hot figure that was measured (None for null or {"unavailable": ...})."""
    return doc if doc is not None and "median_s" in doc else None


def _size(size: Doc, where: str, label: str = "") -> Iterator[str]:
    label = label or f"size n={size['n']}"
    clock = size.get("clock_mhz")
    if clock is not None:
        dropped = clock["after"] < THROTTLE * clock["before"]
        if dropped is not size["throttled"]:
            yield (f"{label} says throttled={str(size['throttled']).lower()} but its SM clock "
                   f"went from {_g(clock['before'])} to {_g(clock['after'])} MHz")
    figures = {(side, q): _timing(size[side].get(q)) for side in SIDES for q in QUANTITIES}
    hot = size.get("hot") or {}
    figures.update({(side, "hot_device"): _timing(hot.get(side)) for side in SIDES})
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
            yield f"{where}.{key} is {_g(t[key])} s, outside [min_s, max_s] = [{_g(lo)}, {_g(hi)}]"


def _placements(size: Doc, figures: Mapping[tuple[str, str], Doc | None],
                where: str) -> Iterator[str]:
    """Each spread's median and range from its medians, and the figure it is the median of."""
    for side, per in (size.get("placements") or {}).items():
        for q, spread in per.items():
            at, medians = f"{where}.placements.{side}.{q}", spread["medians_s"]
            mid = statistics.median(medians)
            spread_range = (max(medians) - min(medians)) / mid if mid > 0 else 0.0
            if not _close(spread["median_s"], mid):
                yield f"{at}.median_s is {_g(spread['median_s'])} but its medians give {_g(mid)}"
            elif not _close(spread["rel_range"], spread_range, 1e-6):
                yield (f"{at}.rel_range is {_g(spread['rel_range'])} but its medians give "
                       f"{_g(spread_range)}")
            figure = figures.get((side, q))
            if figure is not None and not _close(figure["median_s"], mid):
                yield (f"{where} {side} {q} median_s is {_g(figure['median_s'])} but the "
                       f"median over its placements is {_g(mid)}")


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
            yield (f"{label} {q} speedup {_g(iv['median'])}x lies outside its interval "
                   f"[{_g(iv['low'])}, {_g(iv['high'])}]")
            continue
        low, high, top = _speedup_range(size, s, g, q)
        if not low * (1 - REL) <= iv["median"] <= high * (1 + REL):
            gives = f"{_g(low)}x" if _close(low, high) else f"{_g(low)}x to {_g(high)}x"
            yield (f"{label} says {q} speedup {_g(iv['median'])}x but its timings give "
                   f"{gives} (stream {_g(s['median_s'])} s, graph {_g(g['median_s'])} s)")
        elif iv["high"] > top * (1 + REL):
            yield (f"{label} says {q} speedup interval reaches {_g(iv['high'])}x but its "
                   f"timings allow at most {_g(top)}x")


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
                                           and not _close(got, want, 1e-6)):
        said = "null" if got is None else _g(got)
        gives = "null (a graph launch saves nothing)" if want is None else _g(want)
        yield f"{label} says break_even_launches {said} but its up-front and timings give {gives}"


# --------------------------------------------------------------------------------- sweep

def _line(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float, float] | None:
    """Least squares y = a + b*x and R² (as graphcert.stats.fit_line); None when the xs do
    not spread (no line)."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    a = my - b * mx
    ss_res = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys, strict=True))
    ss_tot = sum((y - my) ** 2 for y in ys)
    return a, b, (1 - ss_res / ss_tot if ss_tot else 1.0)


def _sweep(results: Doc, verdict: Doc) -> Iterator[str]:
    values, points = results["values"], results.get("points") or []
    evidence: list[tuple[str, str]] = []
    if points and len(points) != len(values):
        yield f"results has {len(values)} values but {len(points)} points"
        return
    names = results.get("certificates")
    if points and names is not None and len(names) != len(points):
        yield f"results has {len(points)} points but {len(names)} certificates"
    for i, p in enumerate(points):
        yield from _size(p, f"results.points[{i}]", f"results.points[{i}] (n={p['n']})")
        if p["throttled"]:
            evidence.append(("fail", f"the point at {results['key']}={values[i]} is throttled"))
    if points:
        yield from _fits(results, [float(v) for v in values], points)
    yield from _verdict(verdict, "verdict", evidence)


def _fits(results: Doc, xs: Sequence[float], points: Sequence[Doc]) -> Iterator[str]:
    for way, per in results["fit"].items():
        for q, fit in per.items():
            ys = [_timing(p[way].get(q)) for p in points]
            want = (_line(xs, [t["median_s"] for t in ys if t is not None])
                    if len(xs) >= 2 and all(t is not None for t in ys) else None)
            at = f"results.fit.{way}.{q}"
            if fit is None or want is None:
                if (fit is None) != (want is None) and len(set(xs)) > 1:
                    yield (f"{at} is {'null' if fit is None else 'a line'} but its points "
                           f"{'give a line' if fit is None else 'give none'}")
                continue
            a, b, r2 = want
            scale = max(abs(t["median_s"]) for t in ys if t is not None) or 1.0
            off = max(abs((fit["a_s"] + fit["b_s"] * x) - (a + b * x)) for x in xs)
            if off > 1e-6 * scale or abs(fit["r2"] - r2) > 1e-6:
                yield (f"{at} says a_s={_g(fit['a_s'])}, b_s={_g(fit['b_s'])}, "
                       f"r2={_g(fit['r2'])} but its points give a_s={_g(a)}, b_s={_g(b)}, "
                       f"r2={_g(r2)}")
