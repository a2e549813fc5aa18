"""What bench's timing harness (graphcert.run.harness) is set to: stopping rule, L2
flushing, blocker timeout, placements, context state, hot figure. Pure data: a worker's job
carries it as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field

from graphcert.jsontypes import Doc, JSONObject, as_doc, to_float, to_int
from graphcert.stats import StopRule


@dataclass(frozen=True)
class BenchSettings:
    rule: StopRule = field(default_factory=StopRule)
    flush_l2: bool = True  # nvbench's default; see the --flush-l2 option
    blocker_timeout_s: float = 5.0
    max_queued_ops: int = 256  # host loops enqueue at most this many ops between syncs
    placements: int = 8  # buffer placements per size (the figure is their median)
    # Each placement after the first in a new primary context (RunContext.renew): the stream
    # path's device time moves with the context as much as between processes.
    new_contexts: bool = True
    settle: bool = True  # False: time the context's fresh single-stream state (a child)
    hot: bool = True  # also the hot figure (back to back, L2 warm)
    context: str = "settled"  # settled | fresh | both (run.jobs starts a child for fresh)

    def to_json(self) -> JSONObject:
        """Every setting, as a worker's job carries them (graphcert.run.fresh.BenchJob)."""
        return {"rule": self.rule.to_json(), "flush_l2": self.flush_l2,
                "blocker_timeout_s": self.blocker_timeout_s,
                "max_queued_ops": self.max_queued_ops, "placements": self.placements,
                "new_contexts": self.new_contexts, "settle": self.settle, "hot": self.hot,
                "context": self.context}

    @classmethod
    def from_json(cls, doc: Doc) -> BenchSettings:
        return cls(StopRule.from_json(as_doc(doc, "rule")), bool(doc["flush_l2"]),
                   to_float(doc, "blocker_timeout_s"), to_int(doc, "max_queued_ops"),
                   to_int(doc, "placements"), bool(doc["new_contexts"]), bool(doc["settle"]),
                   bool(doc["hot"]), str(doc["context"]))
