"""`graphcert gate`: the CI gate over certificates. Exit 0 pass, 1 fail, 2 unusable input."""

from __future__ import annotations

from pathlib import Path

import click

from graphcert.commands._gatecall import gate_inputs
from graphcert.commands._options import PathParam


@click.command("gate")
@click.argument("paths", nargs=-1, required=True, type=PathParam(path_type=Path))
@gate_inputs
@click.option("--junit", type=PathParam(path_type=Path), default=None,
              help="Write JUnit XML here.")
@click.option("--summary", type=PathParam(path_type=Path), default=None,
              help="Write a markdown summary here ($GITHUB_STEP_SUMMARY gets it appended "
                   "whenever that is set).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the report as JSON (on exit 2 too: status \"unusable\", with the "
                   "unusable inputs listed).")
@click.pass_context
def command(context: click.Context, paths: tuple[Path, ...], baseline: Path | None,
            policy_file: Path | None, junit: Path | None, summary: Path | None,
            as_json: bool, require_signature: bool, signing_key_file: Path | None) -> None:
    """Check every certificate under PATHS against a policy and an optional baseline.

    \b
    Exit codes:
      0  pass (warnings included)
      1  a rule failed
      2  unusable input, one line each on stderr: a certificate corrupt,
         edited, unsigned (when required), of another schema version or
         stale (its sources or graphcert's method changed); a bad policy,
         key or path

    --json, --junit, --summary and $GITHUB_STEP_SUMMARY are written on every exit, 2
    included (then listing each unusable input); a bad output path is refused first, with
    nothing written.

    Policy keys (TOML): require = {scan = ["topology", "bench"]},
    require_kinds, min_speedup, speedup_metric, max_nodes, allow_topology_change,
    allow_cross_gpu_topology (topology differing between GPUs warns instead of failing),
    allow_incomplete (an incomplete verify warns instead of failing), max_regression,
    min_noise, method_change ("stale" or "warn"), require_signature, allow_empty_baseline.
    min_speedup and max_nodes take a number or a table by workload ({chain = 2.0, "*" =
    1.0}); a table may name only workloads of the certificates gated or of require (a
    required workload without its certificate fails the gate), so any other name is a typo:
    exit 2, naming the closest workload. A key beside [tool.graphcert.gate] (a top-level
    key a pyproject.toml has no use for, or another key under [tool.graphcert]) would be
    ignored, so it is exit 2 too. Timings are compared like nvbench-compare (same,
    faster, slower, ambiguous); noise never fails a build, and a timing that ended on its
    sampling timeout warns where a speedup floor rests on it or it moved against the
    baseline (one that compared same passes). The baseline is read as its own set: it may
    be PATHS itself or a copy of it, and one kept inside PATHS is left out of them.
    """
    from graphcert.commands._gatecall import gate_outcome
    from graphcert.commands._options import invocation
    from graphcert.errors import InputError
    from graphcert.fileio import check_output_file, missing_folder, write_output
    from graphcert.gate import GateRun
    from graphcert.render.console import print_json
    from graphcert.render.report import OutputFormat, print_table, render

    # Every output is checked before the gate runs: a bad path is exit 2, never a
    # verdict followed by a traceback.
    summary_env = invocation(context).options.step_summary  # $GITHUB_STEP_SUMMARY
    step = Path(summary_env) if summary_env else None
    for target, what in ((junit, "--junit"), (summary, "--summary"),
                         (step, "$GITHUB_STEP_SUMMARY")):
        if target is not None:
            check_output_file(target, what)
    outcome = gate_outcome(paths, baseline=baseline, policy_file=policy_file,
                           require_signature=require_signature,
                           signing_key_file=signing_key_file)
    # unusable input (exit 2) is a report too: CI keeps its JSON, JUnit and summaries, each
    # listing what could not be used (its lines are on stderr already)
    report = outcome.report if isinstance(outcome, GateRun) else outcome
    if as_json:
        print_json(render(report, OutputFormat.JSON))
    elif isinstance(outcome, GateRun):
        print_table(outcome.report, invocation().out)
    markdown = render(report, OutputFormat.MARKDOWN)
    # checked above, yet a disk can fill up: still one line naming the file, exit 2
    created = {}  # folder made -> for which file
    if junit is not None:
        created[write_output(junit, render(report, OutputFormat.JUNIT), "--junit")] = junit
    if summary is not None and (step is None or step.resolve() != summary.resolve()):
        created[write_output(summary, markdown, "--summary")] = summary
    if step is not None:  # GitHub Actions: append, never overwrite earlier steps' text
        created[missing_folder(step)] = step
        try:
            step.parent.mkdir(parents=True, exist_ok=True)
            with step.open("a", encoding="utf-8") as handle:
                handle.write(markdown + "\n")
        except OSError as exc:
            raise InputError(f"$GITHUB_STEP_SUMMARY {step} cannot be written: "
                             f"{exc.strerror or exc}") from exc
    for folder, target in created.items():
        if folder is not None:
            click.echo(f"graphcert: created the folder {folder} for {target}", err=True)
    context.exit(report.exit_code)
