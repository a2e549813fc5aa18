"""What-if attribution of a profiled graph: what a replay would save without each node. Pure.

Each attributed node is disabled in an executable graph (the driver's node enable switch: the
node becomes a no-op, its dependencies stay) and replays are timed with it on and off, no
tracer running. Paired samples: each pair is one held replay with the node enabled and one
with it disabled, the order alternating from pair to pair so a drift between the two cancels;
the contribution is the median of the pairwise differences (enabled - disabled) with its 95%
interval (graphcert.orderstats.median_interval). On a serial chain a node's contribution is its
own time and the gap before it; a node off the critical path shows its slack, about zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphcert.jsontypes import Doc, JSONObject, as_docs, as_float, as_int, as_str
from graphcert.model import NodeKind
from graphcert.profiling import Profile

# The node kinds the driver can disable in an executable graph (cuGraphNodeSetEnabled).
DISABLEABLE = (NodeKind.KERNEL, NodeKind.MEMCPY, NodeKind.MEMSET)
DEFAULT_NODES = 16  # nodes attributed per class, the longest by traced median
DEFAULT_PAIRS = 30  # (enabled, disabled) pairs of held replays per node
DEFAULT_BUDGET_S = 5.0  # wall time per class; nodes not reached within it are skipped


@dataclass(frozen=True)
class NodeContribution:
    """What a replay saves without node `index` (canonical): the median of `pairs` paired
    differences (enabled - disabled device time) and its 95% interval, in ns."""

    index: int
    contribution_ns: float
    low_ns: float
    high_ns: float
    pairs: int

    def to_json(self) -> JSONObject:
        return {"index": self.index, "contribution_ns": self.contribution_ns,
                "low_ns": self.low_ns, "high_ns": self.high_ns, "pairs": self.pairs}

    @classmethod
    def from_json(cls, doc: Doc) -> NodeContribution:
        return cls(as_int(doc, "index"), as_float(doc, "contribution_ns"),
                   as_float(doc, "low_ns"), as_float(doc, "high_ns"), as_int(doc, "pairs"))


@dataclass(frozen=True)
class WhatIf:
    """One class's what-if attribution: the untraced replay's device time (median and 95%
    interval, ns), each attributed node's contribution (longest traced first), how the nodes
    were chosen in words, and how many disableable timed nodes were not attributed (beyond
    the top-k, or not reached within the time budget)."""

    baseline_ns: float
    baseline_low_ns: float
    baseline_high_ns: float
    nodes: tuple[NodeContribution, ...]
    selection: str
    skipped: int

    def to_json(self) -> JSONObject:
        return {"baseline_ns": self.baseline_ns, "baseline_low_ns": self.baseline_low_ns,
                "baseline_high_ns": self.baseline_high_ns,
                "nodes": [n.to_json() for n in self.nodes], "selection": self.selection,
                "skipped": self.skipped}

    @classmethod
    def from_json(cls, doc: Doc) -> WhatIf:
        return cls(as_float(doc, "baseline_ns"), as_float(doc, "baseline_low_ns"),
                   as_float(doc, "baseline_high_ns"),
                   tuple(NodeContribution.from_json(n) for n in as_docs(doc, "nodes")),
                   as_str(doc, "selection"), as_int(doc, "skipped"))


def contribution(index: int, enabled_ns: Sequence[float], disabled_ns: Sequence[float]
                 ) -> NodeContribution:
    """Node `index`'s contribution from paired samples: enabled_ns[i] and disabled_ns[i] are
    one pair's two held replays (ns); the median of the differences and its 95% interval."""
    if len(enabled_ns) != len(disabled_ns):
        raise ValueError(f"node {index}: {len(enabled_ns)} enabled samples but "
                         f"{len(disabled_ns)} disabled ones (samples come in pairs)")
    diffs = [e - d for e, d in zip(enabled_ns, disabled_ns, strict=True)]
    # numpy's import stays out of the certificate readers (graphcert show, gate)
    from graphcert.orderstats import median_interval

    low, med, high = median_interval(diffs)
    return NodeContribution(index, med, low, high, len(diffs))


def ranked_nodes(profile: Profile) -> list[int]:
    """The profile's nodes the driver can disable (kernel, memcpy, memset; not a child graph's
    or a conditional body's records), longest traced median first (ties by index)."""
    nodes = [n for n in profile.nodes if n.kind in DISABLEABLE and n.body_records is None]
    return [n.index for n in sorted(nodes, key=lambda n: (-n.median_ns, n.index))]


def selection_text(attributed: int, eligible: int, top: int, unreached: int,
                   budget_s: float) -> str:
    """How the attributed nodes were chosen, in words (`unreached`: chosen nodes the time
    budget left out)."""
    chosen = min(top, eligible)
    text = (f"the {chosen} longest of {eligible} kernel, memcpy and memset nodes by traced "
            f"median" if chosen < eligible else
            f"all {eligible} kernel, memcpy and memset nodes")
    if unreached:
        text += (f"; {unreached} of them not reached within the {budget_s:g} s budget "
                 f"({attributed} attributed)")
    return text


__all__ = ["DEFAULT_BUDGET_S", "DEFAULT_NODES", "DEFAULT_PAIRS", "DISABLEABLE",
           "NodeContribution", "WhatIf", "contribution", "ranked_nodes", "selection_text"]
