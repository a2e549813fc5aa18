"""The gate over certificates from many GPUs: one workload's topology must not depend on the GPU.

Topology certificates of one workload reference made on different GPUs (by UUID, or by name
where a UUID is missing) are compared class by class against the first GPU's (sorted by name,
UUID, path). A class whose topology hash differs fails (warns with policy
allow_cross_gpu_topology = true), naming both GPUs and the first differing node when both
classes embed their snapshot, else the hashes and node counts. A launch-shape difference
alone is listed and passes: grid sizes may follow the GPU. Timings are never compared across
GPUs here; a bench certificate meets only a baseline of its own GPU model (rules.Loaded.key).
Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, cast

from graphcert.cert.certificate import Certificate
from graphcert.cert.results.fleet import short_uuid
from graphcert.gate.policy import Policy
from graphcert.gate.rules import Loaded, RuleResult, rules_of


def gpu_text(cert: Certificate) -> str:
    """`NVIDIA H200 (GPU-1a2b...)`: a GPU named so two of one model are told apart."""
    name, uuid = cert.environment.gpu.ident
    return f"{name} ({uuid})" if uuid else name


def gpu_labels(loaded: Sequence[Loaded]) -> dict[str, str]:
    """Each certificate path's GPU as the report shows it: the model name, plus the short
    UUID where the set holds certificates of several GPUs of that model."""
    uuids: dict[str, set[str]] = {}
    for it in loaded:
        name, uuid = it.cert.environment.gpu.ident
        uuids.setdefault(name, set()).add(uuid)
    out = {}
    for it in loaded:
        name, uuid = it.cert.environment.gpu.ident
        several = len(uuids[name]) > 1 and uuid
        out[it.path] = f"{name} {short_uuid(uuid)}" if several else name
    return out


def gpu_name_conflicts(items: Sequence[Loaded]) -> list[str]:
    """One line per certificate whose GPU UUID another certificate of the run (or of its
    baseline) names differently: one physical GPU has one name, and a renamed copy would be
    shown, and judged, as a second GPU."""
    first: dict[str, tuple[str, Loaded]] = {}
    out = []
    for it in items:
        name, uuid = it.cert.environment.gpu.ident
        if not uuid:
            continue
        seen = first.setdefault(uuid, (name, it))
        if seen[0] != name:
            out.append(f"{it.path}: contradicts {seen[1].path}: GPU {uuid} is named {name!r} "
                       f"here but {seen[0]!r} there (one GPU has one name; edited?)")
    return out


class CrossGpuRule(Protocol):
    """A kind's rule over one workload's certificates from several GPUs (optional in its
    rules module: a kind whose results must agree across GPUs offers it)."""

    def __call__(self, ref: str, items: Sequence[Loaded], policy: Policy) -> RuleResult: ...


def _cross_gpu_rule(kind: str) -> CrossGpuRule | None:
    rule = getattr(rules_of(kind), "cross_gpu_rule", None)
    return cast(CrossGpuRule, rule) if rule is not None else None


def cross_gpu_rules(loaded: Sequence[Loaded], policy: Policy) -> list[RuleResult]:
    """One rule per workload and kind whose certificates come from more than one GPU, where
    the kind says its results must agree across GPUs (topology)."""
    groups: dict[tuple[str, str], list[Loaded]] = {}
    for it in loaded:
        groups.setdefault((it.cert.kind, it.cert.workload.ref), []).append(it)
    out = []
    for (kind, ref), items in sorted(groups.items()):
        items = sorted(items, key=lambda x: (*x.cert.environment.gpu.ident, x.path))
        rule = _cross_gpu_rule(kind)
        if rule is None or len({x.cert.environment.gpu.ident for x in items}) < 2:
            continue
        out.append(rule(ref, items, policy))
    return out
