"""A topology certificate's claims against its evidence: classes ascending, a passing class
with only passing samples, padding waste and node counts from the samples, transitions from
the class fingerprints, the verdict no better than its classes. Pure."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from graphcert.cert.evidence import Doc, verdict_contradictions
from graphcert.cert.kind import KindResult

CHECKS = ("topology_equal", "shape_equal", "output_equal", "param_update_output_equal",
          "node_count_matches_prediction")


def contradictions(results: Doc, verdict: Doc, result: KindResult) -> list[str]:
    """Every way a topology certificate's results and verdict disagree."""
    return list(_topology(results, verdict))



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
    yield from verdict_contradictions(verdict, "verdict", evidence)


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
    elif not any(s[check] is True for s in samples for check in CHECKS):
        yield f"{name} says pass but no check ran at any of its samples (all null)"
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
