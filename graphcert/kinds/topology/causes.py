"""Why a framework step's bucket failed: the causes verify tells apart, each with the words
and the fix it reports. Pure.

graphcert/run/step_causes.py finds the cause of a sample whose replay differs from the eager
call; run/steps.py records it on the sample and the class (`cause` in the certificate), and
VerifyResult.judge collapses classes that fail with one cause into one line and a count.
"""

from __future__ import annotations

from enum import Enum


class Cause(str, Enum):
    """Why a step's bucket failed (the certificate's `cause` of a class and of a sample)."""

    CAPTURE = "capture"  # the framework refused to capture the step (host sync, allocation)
    RAISED = "raised"  # the step raised at a sampled size
    PADDING = "padding"  # the real rows change when only the padded rows change
    STALE_CAPTURE = "stale-capture"  # the graph replays state the eager path changes per call
    MOVED_MEMORY = "moved-memory"  # a captured kernel parameter points outside live memory
    UNEXPLAINED = "unexplained"  # the replay differs, and none of the tests above says why

    @property
    def label(self) -> str:
        """A few words for a count line ("3 more ... fail the same way (<label>)")."""
        return _LABELS[self]


_LABELS = {Cause.CAPTURE: "capture refused", Cause.RAISED: "the step raised",
           Cause.PADDING: "padding dependence", Cause.STALE_CAPTURE: "stale capture",
           Cause.MOVED_MEMORY: "moved memory", Cause.UNEXPLAINED: "cause not found"}


def padding_reason(padded: int, pad: str, poison: str) -> str:
    """The real rows changed when only the `padded` rows went from `pad` to `poison`."""
    return (f"padding dependence: its real rows change when only the {padded:,} padded rows "
            f"change (padded with {pad}, then with {poison}), so its result depends on the "
            "padded rows (e.g. a reduction over the whole padded batch): make each row depend "
            "only on its own inputs, or mask the padding, or give each input the pad value it "
            "needs (pad_value per input, e.g. -1 for slot mappings)")


def stale_reason(evidence: str) -> str:
    """The graph replays what it was captured with while the eager path changes it."""
    return (f"stale capture: {evidence}; the graph replays what it was captured with while "
            "the step's eager path changes it on every call (e.g. a Python number such as a "
            "step counter, frozen into the graph when captured): pass what changes as an "
            "input from make_inputs, or keep it in a device tensor the step updates in place")


def moved_memory_reason(node: int, param: int) -> str:
    """Kernel node `node` (canonical order) was captured with parameter `param` pointing into
    memory that is no longer allocated when the graph replays."""
    return (f"moved memory: kernel node {node} parameter {param} points outside every live "
            "allocation when the graph replays (the buffer it was captured with was freed or "
            "reallocated): keep every buffer the graph reads alive as long as the graph "
            "(static inputs, outputs and workspaces in the step's closure), or capture again "
            "after reallocating")


def unexplained_reason(why: str | None = None) -> str:
    """Neither padding nor stale state explains a replay that differs (`why`: what stopped
    the search, if something did)."""
    if why is not None:
        return f"cause not found: looking for it raised {why}"
    return ("cause not found: neither padding (a poison in the padded rows leaves the real "
            "rows as they are) nor stale capture (with nothing padded the replay matches, and "
            "two eager calls agree) explains it; the graph computes differently from the eager "
            "call at n (e.g. the step reads the batch size, x.shape[0], which in the graph is "
            "the bucket's; or a kernel picked for the bucket's size rounds differently: then "
            "widen rtol/atol)")


__all__ = ["Cause", "moved_memory_reason", "padding_reason", "stale_reason",
           "unexplained_reason"]
