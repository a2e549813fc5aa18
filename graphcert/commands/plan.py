"""`graphcert plan`: the bucket list that serves a traffic mix best within the budgets,
chosen from the step's measured costs."""

from __future__ import annotations

from pathlib import Path

import click

from graphcert.commands._options import (
    Bounded,
    PathParam,
    certificate_options,
    invocation,
    json_option,
    resolve_device,
    signing_key_option,
    single_device_option,
)
from graphcert.errors import ExitStatus

MAX_BYTES = 1 << 50  # a pool budget beyond a petabyte is a typo, not a budget
MAX_CAPTURE_S = 86_400.0
MAX_SIZE = 1 << 20


@click.command("plan")
@click.argument("step")
@click.option("--traffic", "traffic", required=True,
              type=PathParam(exists=True, dir_okay=False, path_type=Path),
              help="The traffic mix: CSV or JSON, a histogram of batch sizes (size, count) or "
                   "a list of sizes.")
@click.option("--max-graphs", type=Bounded(int, 1, MAX_SIZE), default=None,
              help="At most this many graphs.")
@click.option("--memory-budget", type=Bounded(int, 0, MAX_BYTES, unit="bytes"), default=None,
              help="The graphs' pool bytes, summed, at most this.")
@click.option("--capture-budget", type=Bounded(float, 0, MAX_CAPTURE_S, unit="seconds"),
              default=None, help="Capture + instantiate seconds, summed, at most this.")
@click.option("--max-size", type=Bounded(int, 1, MAX_SIZE), default=None,
              help="The largest bucket and batch size (default: the traffic's largest).")
@click.option("--compare", "compare", multiple=True,
              help="Also evaluate this list (1,2,4,8 or vllm:MAX / sglang:MAX); repeatable. "
                   "vllm:MAX and sglang:MAX at --max-size are always compared.")
@click.option("--current", default=None,
              help="The engine's committed list, compared as 'current' (the gate's "
                   "max_plan_regret holds it to the plan).")
# default: graphcert.plan.optimise.TOLERANCE (not imported: the command loads lazily)
@click.option("--tolerance", type=Bounded(float, 0, 0.5), default=0.005, show_default=True,
              help="Lists within this fraction of the best expected time count as tied and "
                   "the one with the fewest graphs wins (default: the 0.5% precision the "
                   "step's device figures are measured to); 0 asks for the strict optimum.")
@certificate_options("Where the plan certificate goes.", "Plan without writing a certificate.")
@single_device_option
@signing_key_option
@json_option
def command(step: str, traffic: Path, max_graphs: int | None, memory_budget: int | None,
            capture_budget: float | None, max_size: int | None, compare: tuple[str, ...],
            current: str | None, tolerance: float, out_dir: Path, no_certificate: bool,
            device: int | None, as_json: bool) -> None:
    """Measure framework STEP (path/file.py:STEP or module:STEP) on a grid of candidate
    bucket sizes and choose the bucket list minimising the expected device time per step
    over the traffic, within the budgets; print it beside the presets. Buckets are chosen
    among measured sizes only. Exits 1 if a compared list that keeps the budgets beats the
    plan by more than the tolerance."""
    from graphcert.plan.costs import Budgets

    budgets = Budgets(max_graphs, memory_budget, capture_budget, max_size)
    options = invocation().options
    index = resolve_device(device, options)

    import json

    from graphcert.kinds.plan.views import plan_view
    from graphcert.render.console import print_json
    from graphcert.run.plan import PLAN_SETTINGS, PlanRequest, plan_step

    request = PlanRequest(step, traffic, budgets, compare, current, tolerance)
    done = plan_step(request, PLAN_SETTINGS, device=index,
                     out_dir=None if no_certificate else out_dir, options=options)
    if as_json:
        print_json(json.dumps({"ref": done.ref, "results": done.result.to_json(),
                                   "verdict": done.result.verdict.to_json(),
                                   "certificate": None if done.certificate is None
                                   else str(done.certificate)}, indent=2))
    else:
        out = invocation().out
        out.print(done.ref, markup=False, highlight=False)
        for part in plan_view(done.result):
            out.print(part)
        if done.certificate is not None:
            invocation().err.print(f"certificate: {done.certificate}", markup=False,
                                   highlight=False)
    if not done.result.verdict.passed:
        click.get_current_context().exit(ExitStatus.FAILED)
