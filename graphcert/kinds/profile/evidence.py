"""A profile certificate's claims held against its own evidence (graphcert.cert.evidence's part
for kind "profile"). Pure: no numpy.

Per class, every figure graphcert.profiling.analyse derives is recomputed from the per-node
figures the certificate stores: the sum of node medians, each node's share, parallelism (sum
over span), the critical path and its length (from the recorded edges and node medians); the
nodes and untimed nodes cover the graph's indices once each; each node's figures are ordered
(min <= low <= median <= high <= max); the overhead's ratio, the notes and the verdict are
what `ProfileResult` gives; a what-if attribution's contributions lie inside their intervals
and name timed nodes of the profile. In span mode each class has a span and no per-node
figures (a per-node profile: the reverse), and its stored distortion is traced / untraced.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from graphcert.cert.evidence import RANK, Doc
from graphcert.cert.kind import KindResult
from graphcert.errors import InputError
from graphcert.kinds.profile.result import ProfiledClass, ProfileResult
from graphcert.kinds.profile.span import SPAN_MODE
from graphcert.profiling import Profile, longest_path

REL = 1e-9  # float rounding between the way graphcert summed a figure and this



def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL, abs_tol=1e-6)


def contradictions(results: Doc, verdict: Doc, result: KindResult) -> list[str]:
    """Every way a schema-valid profile certificate's results and verdict disagree
    (`result`: the same results, typed)."""
    assert isinstance(result, ProfileResult)
    return list(_contradictions(results, verdict, result))


def _contradictions(results: Doc, verdict: Doc, result: ProfileResult) -> Iterator[str]:
    for i, (cls, doc) in enumerate(zip(result.classes, results["classes"], strict=True)):
        yield from _class(f"results.classes[{i}]", cls, doc)
    for i, cls in enumerate(result.classes):
        if cls.span_mode != (result.mode == SPAN_MODE):
            yield (f"results.classes[{i}] is {'a span' if cls.span_mode else 'a per-node'} "
                   f"class in a {result.mode}-mode profile")
    labels = [c.label for c in result.classes]
    if len(set(labels)) != len(labels):
        yield f"results.classes: a label repeats ({labels})"
    if list(results["notes"]) != list(result.notes):
        yield f"results.notes are {list(results['notes'])} but the figures give " \
              f"{list(result.notes)}"
    judged = result.verdict
    stored = str(verdict.get("status") or ("pass" if verdict["passed"] else "fail"))
    if RANK[judged.status.value] != RANK[stored]:
        why = judged.reasons[0] if judged.reasons else "nothing is missing"
        yield (f"verdict.status says {stored!r} but the profile's figures give "
               f"{judged.status.value!r} ({why})")


def _class(where: str, cls: ProfiledClass, doc: Doc) -> Iterator[str]:
    if cls.overhead is not None and not _close(float(doc["overhead"]["ratio"]),
                                               cls.overhead.ratio):
        yield (f"{where}.overhead.ratio is {doc['overhead']['ratio']:.6g} but traced / "
               f"untraced is {cls.overhead.ratio:.6g}")
    if cls.overhead is not None:
        stored, extra = doc["overhead"].get("extra_ns_per_record"), cls.overhead.extra_ns_per_record
        if (stored is None) != (extra is None) or (
                stored is not None and extra is not None and not _close(float(stored), extra)):
            yield (f"{where}.overhead.extra_ns_per_record is {stored} but (traced - untraced) "
                   f"/ records_per_replay is {extra}")
    if cls.span is not None and not _close(float(doc["span"]["distortion"]),
                                           cls.span.distortion):
        yield (f"{where}.span.distortion is {doc['span']['distortion']:.6g} but traced / "
               f"untraced is {cls.span.distortion:.6g}")
    if cls.span is not None and not (cls.span.low_ns <= cls.span.median_ns
                                     <= cls.span.high_ns):
        yield f"{where}.span: low_ns <= median_ns <= high_ns does not hold"
    if cls.span is not None and cls.span.records > cls.span.replays:
        yield (f"{where}.span: {cls.span.records} records of {cls.span.replays} replays (one "
               f"a replay at most)")
    yield from _intervals(where, cls)
    if cls.profile is not None:
        yield from derived_contradictions(f"{where}.profile", cls.profile)
    yield from what_if_contradictions(f"{where}.what_if", cls)


def _intervals(where: str, cls: ProfiledClass) -> Iterator[str]:
    """Each held median of the overhead and of the span inside its own interval."""
    o, s = cls.overhead, cls.span
    pairs = ([] if o is None else [("overhead.traced", o.traced_ns, o.traced_interval),
                                    ("overhead.untraced", o.untraced_ns, o.untraced_interval)])
    pairs += ([] if s is None else [("span.traced", s.traced_ns, s.traced_interval),
                                     ("span.untraced", s.untraced_ns, s.untraced_interval)])
    for name, median, interval in pairs:
        if interval is not None and not interval[0] <= median <= interval[1]:
            yield (f"{where}.{name}_ns {median:.6g} is outside its interval "
                   f"[{interval[0]:.6g}, {interval[1]:.6g}]")


def what_if_contradictions(where: str, cls: ProfiledClass) -> Iterator[str]:
    """A class's what-if attribution against its profile: each contribution inside its
    interval, each node a timed node of the profile (once), the baseline inside its own."""
    w = cls.what_if
    if w is None:
        return
    if not w.baseline_low_ns <= w.baseline_ns <= w.baseline_high_ns:
        yield (f"{where}: the baseline {w.baseline_ns:.6g} ns is outside its interval "
               f"[{w.baseline_low_ns:.6g}, {w.baseline_high_ns:.6g}]")
    timed = {n.index for n in cls.profile.nodes} if cls.profile is not None else set()
    seen: set[int] = set()
    for n in w.nodes:
        if not n.low_ns <= n.contribution_ns <= n.high_ns:
            yield (f"{where}: node {n.index}'s contribution {n.contribution_ns:.6g} ns is "
                   f"outside its interval [{n.low_ns:.6g}, {n.high_ns:.6g}]")
        if n.index not in timed:
            yield f"{where}: node {n.index} is not a timed node of the profile"
        elif n.index in seen:
            yield f"{where}: node {n.index} is attributed twice"
        seen.add(n.index)


def derived_contradictions(where: str, p: Profile) -> Iterator[str]:
    """A profile's derived figures against its per-node figures (see the module)."""
    indices = sorted([n.index for n in p.nodes] + [u.index for u in p.untimed])
    n = len(indices)
    if indices != list(range(n)):
        yield f"{where}: the nodes and untimed nodes do not cover indices 0..{n - 1} once each"
        return
    for node in p.nodes:
        if not (node.min_ns <= node.low_ns <= node.median_ns <= node.high_ns <= node.max_ns):
            yield (f"{where}: node {node.index}'s figures are out of order (min {node.min_ns}, "
                   f"low {node.low_ns:.6g}, median {node.median_ns:.6g}, high "
                   f"{node.high_ns:.6g}, max {node.max_ns})")
    total = sum(node.median_ns for node in p.nodes)
    if not _close(p.sum_ns, total):
        yield f"{where}.sum_ns is {p.sum_ns:.6g} but the node medians sum to {total:.6g}"
    for node in p.nodes:
        share = node.median_ns / total if total > 0 else 0.0
        if not _close(node.share, share):
            yield f"{where}: node {node.index}'s share is {node.share:.6g}, not {share:.6g}"
    parallelism = total / p.span_ns if p.span_ns > 0 else 0.0
    if not _close(p.parallelism, parallelism):
        yield (f"{where}.parallelism is {p.parallelism:.6g} but sum / span is "
               f"{parallelism:.6g}")
    weight = [0.0] * n
    for node in p.nodes:
        weight[node.index] = node.median_ns
    try:
        path, length = longest_path(n, p.edges, weight)
    except InputError as exc:
        yield f"{where}.edges: {exc.message}"
        return
    if not _close(p.critical_path_ns, length):
        yield (f"{where}.critical_path_ns is {p.critical_path_ns:.6g} but the longest path "
               f"by node medians is {length:.6g}")
    elif tuple(p.critical_path) != path:
        yield (f"{where}.critical_path is {list(p.critical_path)} but the node medians give "
               f"{list(path)}")
    edges = set(p.edges)
    for gap in p.gaps:
        if not (0 <= gap.from_index < n and 0 <= gap.to_index < n):
            yield f"{where}: a gap joins {gap.from_index} -> {gap.to_index}, not graph nodes"
        elif not gap.through_untimed and (gap.from_index, gap.to_index) not in edges:
            yield (f"{where}: the gap {gap.from_index} -> {gap.to_index} is not an edge of "
                   f"the graph")
