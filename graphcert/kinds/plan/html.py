"""The HTML report's view of a plan certificate: the same lines and table `graphcert show`
prints. Pure."""

from __future__ import annotations

from collections.abc import Mapping

from graphcert.cert.kind import KindResult
from graphcert.kinds.plan.result import PlanResult
from graphcert.kinds.plan.views import _COLUMNS, _ENGINES, _row, plan_lines
from graphcert.render.htmlparts import code, para, table


def results_html(result: KindResult, figures: Mapping[str, str]) -> str:
    """The report's section of a plan certificate."""
    assert isinstance(result, PlanResult)
    return plan_html(result)


def plan_html(plan: PlanResult) -> str:
    """The HTML report's section of a plan certificate: the same lines and table."""
    out = ["<h3>Plan</h3>"] + [para(f"{k}: ", code(v)) if k in _ENGINES else para(f"{k}: {v}")
                               for k, v in plan_lines(plan)]
    rows = [_row(plan, e) for e in (plan.chosen, *plan.comparisons)]
    out.append(table([c.header for c in _COLUMNS], rows, frozenset(range(2, 9)),
                     wrap=frozenset({1, 9})))
    return "".join(out)
