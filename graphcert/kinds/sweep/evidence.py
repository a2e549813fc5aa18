"""A sweep certificate's claims against its evidence: each point as a bench size is checked,
the fitted lines recomputed from the points, the verdict no better than its points. Pure."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from graphcert.cert.evidence import Doc, fmt, verdict_contradictions
from graphcert.cert.kind import KindResult
from graphcert.kinds.bench.evidence import measured, size_contradictions


def contradictions(results: Doc, verdict: Doc, result: KindResult) -> list[str]:
    """Every way a sweep certificate's results and verdict disagree."""
    return list(_sweep(results, verdict))



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
    # graphcert leaves `points` out when a sweep has none, and fits its lines from them: an
    # empty list, or a line with no points under it, stands where the evidence was removed
    if "points" in results and not points:
        yield "results.points is an empty list (a sweep without points leaves it out)"
        return
    lines = [f"{way}.{q}" for way, per in results["fit"].items()
             for q, fit in per.items() if fit is not None]
    if lines and not points:
        yield f"results.fit.{lines[0]} is a line but the sweep holds no points to fit it from"
        return
    if points and len(points) != len(values):
        yield f"results has {len(values)} values but {len(points)} points"
        return
    names = results.get("certificates")
    if points and names is not None and len(names) != len(points):
        yield f"results has {len(points)} points but {len(names)} certificates"
    for i, p in enumerate(points):
        yield from size_contradictions(p, f"results.points[{i}]",
                                       f"results.points[{i}] (n={p['n']})")
        if p["throttled"]:
            evidence.append(("fail", f"the point at {results['key']}={values[i]} is throttled"))
    if points:
        yield from _fits(results, [float(v) for v in values], points)
    yield from verdict_contradictions(verdict, "verdict", evidence)


def _fits(results: Doc, xs: Sequence[float], points: Sequence[Doc]) -> Iterator[str]:
    for way, per in results["fit"].items():
        for q, fit in per.items():
            ys = [measured(p[way].get(q)) for p in points]
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
                yield (f"{at} says a_s={fmt(fit['a_s'])}, b_s={fmt(fit['b_s'])}, "
                       f"r2={fmt(fit['r2'])} but its points give a_s={fmt(a)}, b_s={fmt(b)}, "
                       f"r2={fmt(r2)}")
