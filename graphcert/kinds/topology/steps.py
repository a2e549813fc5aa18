"""Typed facts of one framework-step bucket: what capturing it cost and its graph cache key.
Pure. Travels in a topology certificate's class as `bucket` (optional: other workloads'
classes have none)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from graphcert.jsontypes import (
    Doc,
    JSONObject,
    JSONValue,
    as_doc,
    as_int,
    as_json_doc,
    as_opt_int,
    as_opt_number,
    as_opt_str,
)
from graphcert.model.jsontext import sha256_text


def cache_key(workload: str, options: Mapping[str, object], bucket: int, topology_hash: str,
              node_layout_version: int) -> JSONObject:
    """The graph cache key of a bucket (as xlog-cuda keys its graphs): the five parts and
    `key`, sha256 over their canonical JSON. Equal keys mean the captured graph can be reused."""
    # The options as the key's text holds them (a value JSON has no type for as its str), so
    # the key written into a certificate is the one hashed.
    plain: JSONValue = json.loads(json.dumps(dict(options), default=str))
    parts: JSONObject = {"workload": workload, "options": plain, "bucket": bucket,
                         "topology_hash": topology_hash,
                         "node_layout_version": node_layout_version}
    # Not model.jsontext.canonical_json: certificates record this key, and its text escapes
    # non-ASCII (a reference's path may hold some) where canonical_json keeps it as UTF-8.
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return {**parts, "key": sha256_text(text)}


@dataclass(frozen=True)
class StepBucket:
    """One bucket of a framework step: the framework's capture and instantiate time, its
    memory pool's bytes and the driver's graph memory, replay against eager time (median of a
    few launches, seconds), and the graph cache key."""

    framework: str
    capture_s: float | None = None
    instantiate_s: float | None = None
    pool_bytes: int | None = None
    graph_memory: Mapping[str, int] = field(default_factory=dict)
    replay_s: float | None = None
    eager_s: float | None = None
    cache_key: Mapping[str, JSONValue] | None = None

    @property
    def speedup(self) -> float | None:
        """Eager time over replay time (None when either is missing)."""
        if not self.replay_s or self.eager_s is None:
            return None
        return self.eager_s / self.replay_s

    def to_json(self) -> JSONObject:
        return {"framework": self.framework, "capture_s": self.capture_s,
                "instantiate_s": self.instantiate_s, "pool_bytes": self.pool_bytes,
                "graph_memory": dict(self.graph_memory), "replay_s": self.replay_s,
                "eager_s": self.eager_s,
                "cache_key": dict(self.cache_key) if self.cache_key is not None else None}

    @classmethod
    def from_json(cls, doc: Doc) -> StepBucket:
        memory = as_doc(doc, "graph_memory") if doc.get("graph_memory") else {}
        return cls(as_opt_str(doc, "framework") or "unknown", as_opt_number(doc, "capture_s"),
                   as_opt_number(doc, "instantiate_s"), as_opt_int(doc, "pool_bytes"),
                   {k: as_int(memory, k) for k in memory}, as_opt_number(doc, "replay_s"),
                   as_opt_number(doc, "eager_s"),
                   as_json_doc(doc, "cache_key") if doc.get("cache_key") is not None else None)
