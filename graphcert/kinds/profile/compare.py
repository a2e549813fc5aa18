"""Two profiles compared node by node: nodes lined up by canonical index, each
node's median judged with its 95% interval as bench timings are judged with their noise, and
the critical path. Profiles of different topologies are refused, naming the first node that
differs. Span mode's classes (graphcert.kinds.profile.span) compare their replay span medians
instead, judged the same way; a span profile and a per-node one are not comparable. Pure;
used by the gate (max_node_regression, max_critical_path_regression, max_replay_regression)
and diff.
"""

from __future__ import annotations

from collections.abc import Iterator

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import Change, NodeComparison, ResultsDiff, across_models
from graphcert.errors import GraphcertError
from graphcert.kinds.profile.result import ProfiledClass, ProfileResult
from graphcert.kinds.profile.span import REPLAY_SPAN, SPAN_MODE
from graphcert.profiling import Profile
from graphcert.render.names import short_name


class TopologyMismatch(GraphcertError):
    """Two profiles of different graphs: their nodes cannot be lined up."""


class ModeMismatch(GraphcertError):
    """A span-mode profile and a per-node one: their figures are not the same measure."""


def check_modes(baseline: ProfileResult, current: ProfileResult) -> None:
    """ModeMismatch where the two profiles were made in different modes, or with L2 in
    different states before each replay (clearing it costs each node of a replay 155-200 ns
    on an H100 or H200: benchmarks/NOTES.md), or one by back-to-back replays (certificates
    from before held replays, `flush_l2` None) and the other held."""
    if baseline.mode != current.mode:
        raise ModeMismatch(
            f"the baseline is a {_mode_words(baseline.mode)} profile, this one a "
            f"{_mode_words(current.mode)} profile: not comparable",
            hint=f"profile the baseline in the same mode (graphcert profile"
                 f"{' --span' if current.mode == SPAN_MODE else ''})")
    if baseline.flush_l2 != current.flush_l2:
        raise ModeMismatch(
            f"the baseline's replays were {_l2_words(baseline.flush_l2)}, this profile's "
            f"{_l2_words(current.flush_l2)}: not comparable",
            hint="profile the baseline again with this graphcert and the same "
                 "--flush-l2/--no-flush-l2")


def _l2_words(flush_l2: bool | None) -> str:
    if flush_l2 is None:
        return "timed back to back (a certificate from before held replays)"
    return "held with L2 cleared" if flush_l2 else "held with L2 warm"


def _mode_words(mode: str) -> str:
    return "span-mode" if mode == SPAN_MODE else "per-node"


def diff_results(a: Certificate, b: Certificate, *, min_noise: float) -> ResultsDiff:
    """Nodes lined up by canonical index (another topology refused), each judged against
    `min_noise`; a warning when the two come from two GPU models."""
    ra, rb = a.result, b.result
    assert isinstance(ra, ProfileResult) and isinstance(rb, ProfileResult)
    check_modes(ra, rb)
    if ra.mode == SPAN_MODE:
        nodes, notes = compare_spans(ra, rb, limit=min_noise)
    else:
        nodes, notes = compare_profiles(ra, rb, node_limit=min_noise, path_limit=min_noise)
    models = across_models(a, b)
    warnings = (f"these profile certificates are {models} (the gate would not compare them)",
                ) if models is not None else ()
    return ResultsDiff(nodes=tuple(nodes), notes=tuple(notes), warnings=warnings)


def compare_spans(baseline: ProfileResult, current: ProfileResult, *, limit: float
                  ) -> tuple[list[NodeComparison], list[str]]:
    """The replay span median of every span-mode class both hold (a REPLAY_SPAN row each),
    judged with both intervals; notes for classes in one only or without a span. A class
    whose topology hash differs raises TopologyMismatch."""
    out: list[NodeComparison] = []
    notes: list[str] = []
    for b, cur in paired(baseline, current, notes):
        if b.topology_hash != cur.topology_hash:
            raise TopologyMismatch(
                f"{cur.label}: the profiles are of different topologies (the topology hash "
                f"differs: {b.topology_hash[:12]} -> {cur.topology_hash[:12]})",
                hint="compare profiles of one graph; re-record the baseline after a "
                     "topology change")
        if b.span is None or cur.span is None:
            notes.append(f"{cur.label}: no replay span in the "
                         f"{'baseline' if b.span is None else 'current profile'}")
            continue
        s, o = cur.span, b.span
        out.append(NodeComparison(cur.label, None, REPLAY_SPAN, o.median_ns, s.median_ns,
                                  o.high_ns, s.low_ns,
                                  judge(o.median_ns, o.high_ns, s.median_ns, s.low_ns, limit)))
    return out, notes


def _signature(p: Profile) -> list[tuple[int, str, str]]:
    """(index, kind, name) of every node in canonical order."""
    rows = [(n.index, n.kind.value, n.name or "") for n in p.nodes]
    rows += [(u.index, u.kind.value, "") for u in p.untimed]
    return sorted(rows)


def first_difference(baseline: ProfiledClass, current: ProfiledClass) -> str | None:
    """None when the two classes profile one topology; else what differs first."""
    assert baseline.profile is not None and current.profile is not None
    a, b = _signature(baseline.profile), _signature(current.profile)
    for x, y in zip(a, b, strict=False):
        if x != y:
            return (f"node {x[0]} is {x[1]} {short_name(x[2]) or '-'} in the baseline but "
                    f"{y[1]} {short_name(y[2]) or '-'} now")
    if len(a) != len(b):
        return f"the baseline has {len(a)} nodes, this profile {len(b)}"
    if sorted(baseline.profile.edges) != sorted(current.profile.edges):
        edge = next(iter(sorted(set(baseline.profile.edges) ^ set(current.profile.edges))))
        return f"edge {edge[0]} -> {edge[1]} is in one profile only"
    if baseline.topology_hash != current.topology_hash:
        return f"the topology hash differs ({baseline.topology_hash[:12]} -> " \
               f"{current.topology_hash[:12]}) though the nodes and edges agree"
    return None


def judge(base_ns: float, base_high: float, cur_ns: float, cur_low: float,
          limit: float) -> Change:
    """Within `limit` of the baseline: same. Beyond it: slower (or faster) only where the
    two 95% intervals are apart, else ambiguous (reported, never failed)."""
    diff = (cur_ns - base_ns) / base_ns if base_ns > 0 else 0.0
    if abs(diff) <= limit:
        return Change.SAME
    if diff > 0:
        return Change.SLOWER if cur_low > base_high else Change.AMBIGUOUS
    return Change.FASTER


def compare_profiles(baseline: ProfileResult, current: ProfileResult, *, node_limit: float,
                     path_limit: float) -> tuple[list[NodeComparison], list[str]]:
    """Every node and critical path of the classes both hold, and notes for classes in one
    only. A class whose topology differs raises TopologyMismatch naming the first node.
    Span-mode classes (no per-node figures) are left to compare_spans."""
    out: list[NodeComparison] = []
    notes: list[str] = []
    for b, cur in paired(baseline, current, notes):
        if b.profile is None or cur.profile is None:
            continue
        why = first_difference(b, cur)
        if why is not None:
            raise TopologyMismatch(
                f"{cur.label}: the profiles are of different topologies ({why})",
                hint="compare profiles of one graph; re-record the baseline after a "
                     "topology change")
        bn = {n.index: n for n in b.profile.nodes}
        for n in cur.profile.nodes:
            o = bn[n.index]
            out.append(NodeComparison(cur.label, n.index, n.name or n.kind.value, o.median_ns,
                                      n.median_ns, o.high_ns, n.low_ns,
                                      judge(o.median_ns, o.high_ns, n.median_ns, n.low_ns,
                                            node_limit)))
        out.append(_path(cur.label, b.profile, cur.profile, path_limit))
    return out, notes


def paired(baseline: ProfileResult, current: ProfileResult, notes: list[str]
           ) -> Iterator[tuple[ProfiledClass, ProfiledClass]]:
    """(baseline class, current class) of each label both hold; a note in `notes` for each
    class in one only (those of the current profile as met, the baseline's at the end)."""
    base = {c.label: c for c in baseline.classes}
    for cur in current.classes:
        b = base.get(cur.label)
        if b is None:
            notes.append(f"{cur.label}: only in the current profile")
        else:
            yield b, cur
    notes += [f"{label}: only in the baseline" for label in base
              if current.cls(label) is None]


def _path(label: str, b: Profile, c: Profile, limit: float) -> NodeComparison:
    """The critical path's length; its interval is the sum of its nodes' intervals."""
    def bound(p: Profile, high: bool) -> float:
        on = set(p.critical_path)
        return sum(n.high_ns if high else n.low_ns for n in p.nodes if n.index in on)

    b_high, c_low = bound(b, True), bound(c, False)
    return NodeComparison(label, None, "critical path", b.critical_path_ns, c.critical_path_ns,
                          b_high, c_low, judge(b.critical_path_ns, b_high, c.critical_path_ns,
                                               c_low, limit))
