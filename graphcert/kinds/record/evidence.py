"""A record certificate's claims against its own evidence. Pure.

What the certificate's own rows give is recomputed and held against what it says: each
graph row's launches against its device time, steady state within the whole run, the
steady-state eager list against the steady-state eager count, coverage against whether any
graph ran at all, the churn list from the rows, and the verdict judged again; per process
where the certificate has processes, with its `overall` held against their merge (a figure
changed there alone) and no process killed or outliving the command under a clean verdict."""

from __future__ import annotations

from collections.abc import Iterator

from graphcert.cert.kind import KindResult
from graphcert.jsontypes import Doc
from graphcert.kinds.record.codec import overall_to_json
from graphcert.kinds.record.result import GONE, RecordResult, who
from graphcert.recording import Coverage, Recorded
from graphcert.recording.analysis import MAX_EAGER_GROUPS, churn_of

_FIGURES = ("graph_kernels", "eager_kernels", "graph_ns", "eager_ns")


def contradictions(results: Doc, verdict: Doc, result: KindResult) -> list[str]:
    """Where a record certificate's claims disagree with its own evidence (`result`: the
    same results, typed, as the store made them)."""
    assert isinstance(result, RecordResult)
    out: list[str] = []
    for i, p in enumerate(result.processes):
        at = "results" if result.legacy else f"results.processes[{i}]"
        rec = p.recorded
        out += [*_rows(rec, at), *_steady(rec, at), *_eager(rec, at)]
        if churn_of(rec.graphs) != rec.churn:
            out.append(f"{at}.churn: does not match the graphs of {at}.graphs")
    if not result.legacy:
        out += _overall(results, result)
    gone = [who(p) for p in result.processes if p.info.ended in GONE]
    if gone and result.verdict.passed:
        out.append(f"verdict: passes, but {', '.join(gone)} did not end whole")
    again = result.rejudged()
    if again.status is not result.verdict.status:
        out.append(f"verdict: says {result.verdict.status.value}, the results give "
                   f"{again.status.value}")
    return out


def _overall(results: Doc, result: RecordResult) -> Iterator[str]:
    """The whole's figures as written against the merge of the processes."""
    said = results.get("overall")
    merged = overall_to_json(result.recorded, len(result.processes))
    if not isinstance(said, dict):
        yield "results.overall is missing"
        return
    for key, value in merged.items():
        if said.get(key) != value:
            yield (f"results.overall.{key}: does not match the merge of results.processes "
                   f"({_clip(said.get(key))} against {_clip(value)})")


def _clip(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _rows(rec: Recorded, where: str) -> Iterator[str]:
    """Each row's launches against its device time and its updates. (Graph kernels with no
    row launched are not a contradiction: a graph instantiated before the recording began
    has no row, yet its launches run kernels.)"""
    for g in rec.graphs:
        at = f"{where}.graphs[{g.index}]"
        if g.launches == 0 and (g.device_ns_total or g.device_ns_median is not None):
            yield (f"{at} was launched 0 times but has {g.device_ns_total} ns of device time"
                   + (f" and a median of {g.device_ns_median:g} ns"
                      if g.device_ns_median is not None else ""))
        if g.device_ns_median is not None and g.device_ns_median > g.device_ns_total:
            yield (f"{at}: one launch's median {g.device_ns_median:g} ns is more than its "
                   f"total {g.device_ns_total} ns")
        if g.failed_updates > g.updates:
            yield f"{at}: {g.failed_updates} failed updates of {g.updates}"


def _steady(rec: Recorded, at: str) -> Iterator[str]:
    """Steady state begins at the first graph kernel: it exists exactly when a graph kernel
    ran, and it is part of the whole run."""
    if rec.steady is None:
        if rec.overall.graph_kernels:
            yield (f"{at}.steady is null (no graph kernel ran) but {at}.overall counts "
                   f"{rec.overall.graph_kernels} graph kernels")
        return
    if not rec.overall.graph_kernels:
        yield f"{at}.steady holds a steady state but {at}.overall counts no graph kernel"
    for name in _FIGURES:
        steady, whole = getattr(rec.steady, name), getattr(rec.overall, name)
        if steady > whole:
            yield f"{at}.steady.{name} is {steady}, more than the whole run's {whole}"


def _eager(rec: Recorded, at: str) -> Iterator[str]:
    """The steady-state eager kernels by name add up to the steady-state eager count (all of
    it where the list was not cut at its limit)."""
    steady = rec.steady or Coverage(0, 0, 0, 0)
    count = sum(g.count for g in rec.steady_eager)
    total = sum(g.total_ns for g in rec.steady_eager)
    whole = len(rec.steady_eager) < MAX_EAGER_GROUPS
    for what, listed, said in (("launches", count, steady.eager_kernels),
                               ("ns", total, steady.eager_ns)):
        if listed > said or (whole and listed != said):
            yield (f"{at}.steady_eager lists {listed} eager {what} but {at}.steady "
                   f"says {said}")
