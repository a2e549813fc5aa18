"""Two topology certificates compared class by class: same, launch shape only or topology
changed, with node-level diff lines where both classes embed their snapshot. Pure; used by
the gate and by diff."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphcert.cert.certificate import Certificate
from graphcert.cert.compare import ClassComparison, ResultsDiff
from graphcert.errors import InputError
from graphcert.kinds.topology.result import ClassResult, VerifyResult


def diff_results(a: Certificate, b: Certificate, *, min_noise: float) -> ResultsDiff:
    """Every capacity class of either certificate, compared (`min_noise`: unused, no timings)."""
    ra, rb = a.result, b.result
    assert isinstance(ra, VerifyResult) and isinstance(rb, VerifyResult)
    return ResultsDiff(classes=tuple(compare_topology(ra, rb)))


def compare_topology(baseline: VerifyResult, current: VerifyResult) -> list[ClassComparison]:
    """Class by class: same, shape (launch shape only) or topology changed."""
    base = {c.capacity: c for c in baseline.classes}
    cur = {c.capacity: c for c in current.classes}
    out = []
    for cap in sorted(set(base) | set(cur)):
        b, c = base.get(cap), cur.get(cap)
        node_diff: tuple[str, ...] = ()
        if b is None or c is None:
            change = "only baseline" if b is not None else "only current"
        elif b.topology_hash is None or c.topology_hash is None:
            change = "not comparable"
        elif b.topology_hash != c.topology_hash:
            change = "topology"
        elif b.shape_hash != c.shape_hash:
            change = "shape"
        else:
            change = "same"
        if change in ("topology", "shape") and isinstance(b, ClassResult) and \
                isinstance(c, ClassResult):
            node_diff = _snapshot_diff(b.embedded_snapshot, c.embedded_snapshot)
        out.append(ClassComparison(
            cap, change, b.topology_hash if b else None, c.topology_hash if c else None,
            b.shape_hash if b else None, c.shape_hash if c else None,
            dict(b.counts) if b else {}, dict(c.counts) if c else {}, node_diff))
    return out


def _snapshot_diff(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None
                   ) -> tuple[str, ...]:
    """Node-level diff lines where both classes embed their snapshot (optional evidence: an
    unreadable one leaves the hashes and counts, which decide)."""
    if a is None or b is None:
        return ()
    from graphcert.model import diff_snapshots, snapshot_from_json

    try:
        diff = diff_snapshots(snapshot_from_json(a), snapshot_from_json(b))
    except InputError:
        return ()
    return tuple(diff.summary_lines())
