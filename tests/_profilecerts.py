"""Synthetic profile results and certificates (nothing here came from a GPU): graphs and
records from tests/_profiles.py, joined and analysed by graphcert's own code, wrapped in the
certificate types and sealed with make_certificate. Durations are round made-up numbers."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from graphcert.cert.document import make_certificate
from graphcert.kinds.profile.result import ProfiledClass, ProfileResult, ReplayOverhead
from graphcert.model import NodeKind
from graphcert.profiling import ProfileGraph, analyse, join
from tests._certfactory import environment, synthetic_hash, workload
from tests._profiles import graph, records

K = NodeKind
SYNTHETIC_REPLAYS = 21
# A synthetic fork: 0 -> {1, 2} -> 3, with an empty node 4 after 3 and a memset 5 after it.
SYNTHETIC_KINDS = (K.KERNEL, K.KERNEL, K.KERNEL, K.KERNEL, K.EMPTY, K.MEMSET)
SYNTHETIC_EDGES = ((0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (4, 5))
SYNTHETIC_NS = (1000, 4000, 2000, 1000, 0, 500)  # per node; the empty one takes none


def synthetic_graph(kinds: Sequence[NodeKind] = SYNTHETIC_KINDS,
                    edges: Sequence[tuple[int, int]] = SYNTHETIC_EDGES) -> ProfileGraph:
    return graph(kinds, edges)


def synthetic_class(label: str = "n=256", *, scale: Sequence[float] | None = None,
                    g: ProfileGraph | None = None, replays: int = SYNTHETIC_REPLAYS,
                    gap: int = 100, dropped: int = 0, overhead: float | None = 1.002,
                    jitter: int = 10, topology: str = "fork") -> ProfiledClass:
    """A class profiled from synthetic records: node i takes SYNTHETIC_NS[i] * scale[i] ns,
    +-jitter over replays (a fixed pattern, so the interval of the median is known-narrow)."""
    g = g or synthetic_graph()
    base = [SYNTHETIC_NS[i % len(SYNTHETIC_NS)] * (scale[i] if scale else 1.0)
            for i in range(len(g.nodes))]
    per_replay = [[int(d) + (r % 3 - 1) * jitter for d in base] for r in range(replays)]
    profile = analyse(join(records(g, per_replay, gap=gap), g, dropped=dropped))
    over = ReplayOverhead(10_000.0 * overhead, 10_000.0, 50) if overhead is not None else None
    return ProfiledClass(label, 256, synthetic_hash(f"topology {topology}"), profile, over,
                         None if over is not None else "synthetic: not measured")


def synthetic_result(*classes: ProfiledClass, replays: int = SYNTHETIC_REPLAYS
                     ) -> ProfileResult:
    return ProfileResult("scan", replays, classes or (synthetic_class(),), 130100)


def profile_certificate(result: ProfileResult | None = None, *, ref: str = "scan",
                        gpu: str = "TEST-GPU") -> dict[str, Any]:
    """A sealed synthetic profile certificate with the verdict its result judges."""
    result = result or synthetic_result()
    return make_certificate("profile", workload=workload(ref, kind="profile"),
                            environment=environment(gpu),
                            results=copy.deepcopy(result.to_json()),
                            verdict=result.verdict.to_json())
