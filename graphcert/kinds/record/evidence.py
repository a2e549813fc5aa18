"""A record certificate's claims against its own evidence: the churn list recomputed from the
graph rows, and the verdict judged again. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphcert.kinds.record.result import RecordResult


def contradictions(results: Mapping[str, Any], verdict: Mapping[str, Any]) -> list[str]:
    """Where a record certificate's claims disagree with its own evidence: the churn list
    recomputed from the graph rows, and the verdict judged again."""
    from graphcert.recording.analysis import churn_of

    result = RecordResult.from_json(results, verdict)
    out = []
    if churn_of(result.recorded.graphs) != result.recorded.churn:
        out.append("results.churn: does not match the graphs of results.graphs")
    again = result.rejudged()
    if again.status is not result.verdict.status:
        out.append(f"verdict: says {result.verdict.status.value}, the results give "
                   f"{again.status.value}")
    return out
