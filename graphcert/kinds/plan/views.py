"""The terminal view of a plan: the chosen bucket list in the forms engines take,
the lists compared with it on the same measurements, the budgets and the method. Shared by
`graphcert show` and, later, the command that makes a plan."""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphcert.cert.kind import KindResult
from graphcert.kinds.plan.result import CURRENT, PlanResult
from graphcert.plan.costs import Budgets
from graphcert.plan.engines import Engine, engine_args
from graphcert.plan.evaluate import Evaluation
from graphcert.render.inventory import format_bytes
from graphcert.render.layout import Column, Grid
from graphcert.render.numbers import sizes, us
from graphcert.render.words import Pairs

if TYPE_CHECKING:
    from rich.console import RenderableType

_COLUMNS = (Column("list", key=True), Column("buckets", wrap=True, sep=", "),
            Column("graphs", right=True), Column("per step", right=True),
            Column("vs plan", right=True), Column("padding", right=True),
            Column("eager", right=True), Column("graph memory", right=True),
            Column("capture", right=True), Column("budgets", wrap=True, keep=1))


_ENGINES = ("vLLM", "SGLang", "TensorRT-LLM")  # lines whose value is an engine's own text


def budget_text(b: Budgets) -> str:
    """The budgets in one line; "none" when nothing is limited."""
    parts = [f"max_graphs {b.max_graphs}" if b.max_graphs is not None else "",
             f"memory {format_bytes(b.memory_budget)}" if b.memory_budget is not None else "",
             f"capture {b.capture_budget:.3g} s" if b.capture_budget is not None else "",
             f"max_size {b.max_size}" if b.max_size is not None else ""]
    return ", ".join(p for p in parts if p) or "none"


def _row(plan: PlanResult, e: Evaluation) -> tuple[str, ...]:
    marked = plan.current_row is e and e.label != CURRENT  # the committed list, by name
    label = e.label + (" (current)" if marked else "")
    return (label, sizes(e.buckets), str(e.graphs), us(e.expected_s),
            "-" if e is plan.chosen else f"{plan.regret(e):+.2%}",
            f"{e.padded_fraction:.1%}", f"{e.eager_share:.1%}", format_bytes(e.memory_bytes),
            f"{e.capture_s:.3g} s", "; ".join(e.over_budget) or "fit")


def comparison_table(plan: PlanResult) -> Grid:
    """The plan and every compared list on the same curve and traffic."""
    rows = [_row(plan, e) for e in (plan.chosen, *plan.comparisons)]
    return Grid(_COLUMNS, rows, title="the plan beside the compared lists (expected per step)")


def _source(plan: PlanResult) -> str:
    """Where the traffic came from, without the word the line's label already says (a
    traffic file's source reads "traffic FILE")."""
    source = plan.traffic.source
    return source.removeprefix("traffic ") or source


def interpolation_error(plan: PlanResult) -> float | None:
    """How far the cost curve's straight lines can be off: the largest relative miss, over
    the measured sizes that have measured neighbours on both sides, of each one's replay time
    against the line between its neighbours (leave one out). None with fewer than three
    measured sizes. Interpolated sizes carry that much doubt; a plan's expected gain smaller
    than it is within the model's own error."""
    points = [p for p in plan.curve.points if p.measured]
    misses = []
    for lo, mid, hi in zip(points, points[1:], points[2:], strict=False):
        w = (mid.size - lo.size) / (hi.size - lo.size)
        line = lo.replay_s + (hi.replay_s - lo.replay_s) * w
        if mid.replay_s > 0:
            misses.append(abs(line - mid.replay_s) / mid.replay_s)
    return max(misses) if misses else None


def gain_line(plan: PlanResult) -> tuple[str, str] | None:
    """The plan's expected gain over the committed list, and whether it is within the model's
    error (interpolation_error): then the model cannot tell the two lists apart."""
    row = plan.current_row
    if row is None or row is plan.chosen:
        return None
    gain, error = plan.regret(row), interpolation_error(plan)
    text = (f"the plan is expected {abs(gain):.2%} {'faster' if gain >= 0 else 'slower'} per "
            f"step than {row.label}")
    if error is None:
        return ("gain", text)
    if abs(gain) < error:
        return ("gain", f"{text}: within the cost curve's own error (a line between measured "
                        f"sizes misses one by up to {error:.1%}): the model cannot tell the "
                        f"two lists apart; measure both before switching")
    return ("gain", f"{text}, beyond the cost curve's error (up to {error:.1%})")


def plan_lines(plan: PlanResult) -> list[tuple[str, str]]:
    """Key/value lines: the list in engines' forms, the traffic, budgets and method."""
    chosen, points = plan.chosen, plan.curve.points
    measured = sum(1 for p in points if p.measured)
    out = [("chosen", f"{sizes(chosen.buckets)} ({chosen.graphs} graph(s), "
                      f"{us(chosen.expected_s)} per step)"),
           *((name, engine_args(chosen.buckets, engine)) for name, engine in
             zip(_ENGINES, (Engine.VLLM, Engine.SGLANG, Engine.TRTLLM), strict=True)),
           ("traffic", f"{_source(plan)}: {len(plan.traffic.sizes)} size(s), "
                       f"{plan.traffic.total:,} step(s), digest {plan.traffic_digest[:12]}"),
           ("curve", f"{len(points)} size(s) ({points[0].size} to {points[-1].size}), "
                     f"{measured} measured, {len(points) - measured} interpolated"),
           ("budgets", budget_text(plan.budgets)),
           ("method", plan.why)]
    if plan.lower_bound_s is not None:
        out.append(("bound", f"no list within the budgets beats {us(plan.lower_bound_s)}"))
    gain = gain_line(plan)
    if gain is not None:
        out.append(gain)
    return out


def plan_view(plan: PlanResult) -> list[RenderableType]:
    """A plan certificate's results: its lines, then the comparison table."""
    return [Pairs(plan_lines(plan)), comparison_table(plan)]


def show_view(ref: str, result: KindResult) -> list[RenderableType]:
    """What `graphcert show` draws of a plan certificate's results."""
    assert isinstance(result, PlanResult)
    return plan_view(result)
