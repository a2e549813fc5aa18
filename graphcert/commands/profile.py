"""`graphcert profile`: the device time of every node of a replayed graph, its critical path
and the gaps between dependent nodes, from CUPTI activity records."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from graphcert.commands._options import (
    Bounded,
    certificate_options,
    invocation,
    json_option,
    resolve_device,
    signing_key_option,
    single_device_option,
)
from graphcert.errors import ExitStatus

if TYPE_CHECKING:
    from graphcert.kinds.profile.result import ProfileResult


@click.command("profile")
@click.argument("workloads", nargs=-1, required=True)
@click.option("--size", "size", help="Profile the graph of one size N (default without "
                                     "--classes: 65536; a framework step: its buckets "
                                     "vllm:64).")
@click.option("--classes", help="Each class capacity in LO..HI, or each bucket of a list "
              "(1,2,4,8 or vllm:MAX / sglang:MAX).")
@click.option("--replays", type=Bounded(int, 1, 100_000), default=200, show_default=True,
              help="Traced replays per class (and as many untraced, for the overhead).")
@click.option("--flush-l2/--no-flush-l2", default=True, show_default=True,
              help="Clear L2 before each replay, as bench's device figure does (the one "
                   "device time of a replay; --no-flush-l2: L2 warm from the last replay).")
@click.option("--what-if", "what_if", type=Bounded(int, 0, 100_000), default=16,
              show_default=True,
              help="Per class, what a replay saves without each of the K longest kernel, "
                   "memcpy and memset nodes (each disabled in turn, no tracer on; 0: off).")
@click.option("--what-if-pairs", type=Bounded(int, 1, 100_000), default=30, show_default=True,
              help="Pairs of held replays (node enabled, disabled) per attributed node.")
@click.option("--what-if-budget", type=Bounded(float, 0, 3600, low_open=True, unit="seconds"),
              default=5.0, show_default=True,
              help="Wall seconds what-if may take per class; nodes not reached are counted "
                   "as skipped.")
@click.option("--span", is_flag=True,
              help="Span mode: each replay's device time from one GRAPH_TRACE record a "
                   "launch, no per-node tracing (cheap enough to gate in CI), and its "
                   "distortion on the device clock; no node table.")
@certificate_options("Where the profile certificates go.",
                     "Profile without writing certificates.")
@single_device_option
@signing_key_option
@json_option
def command(workloads: tuple[str, ...], size: str | None, classes: str | None, replays: int,
            flush_l2: bool, what_if: int, what_if_pairs: int, what_if_budget: float,
            span: bool, out_dir: Path, no_certificate: bool, device: int | None,
            as_json: bool) -> None:
    """Replay each of WORKLOADS' graphs REPLAYS times with CUPTI tracing and report, per
    node in canonical order, its median, min and max device time and start offset; the
    replay's span, the critical path, parallelism, the gaps on dependent edges, and the
    tracing overhead; then what a replay saves without each of the longest nodes (--what-if).
    With --span, per class the replay span and its distortion only. Exits 1 if a verdict is
    incomplete (dropped records, missing records)."""
    from graphcert.buckets import parse_buckets, parse_size
    from graphcert.errors import InputError

    if size is not None and classes is not None:
        raise InputError("give --size or --classes, not both")
    source = click.get_current_context().get_parameter_source
    given = [f"--{name.replace('_', '-')}"
             for name in ("what_if", "what_if_pairs", "what_if_budget")
             if source(name) is not click.core.ParameterSource.DEFAULT]
    if span and given:
        raise InputError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply "
                         f"with --span",
                         hint="span mode times whole replays, no node is attributed: leave "
                              "out the what-if options, or --span")
    # neither: each workload at its default (run.profile.default_sizes: a step at its buckets)
    sizes = (parse_buckets(classes) if classes is not None
             else [parse_size(size)] if size is not None else None)
    options = invocation().options
    index = resolve_device(device, options)

    from graphcert.kinds.profile.views import profile_view
    from graphcert.render.console import print_json
    from graphcert.run.profile import ProfiledRun, ProfileSettings, profile_workloads

    out, err = invocation().out, invocation().err

    def show(run: ProfiledRun) -> None:
        if as_json:
            return
        for part in profile_view(run.ref, run.result):
            out.print(part)
        if run.certificate is not None:
            err.print(f"certificate: {run.certificate}", markup=False, highlight=False)

    settings = ProfileSettings(replays, flush_l2, what_if, what_if_pairs, float(what_if_budget),
                               span=span)
    done = profile_workloads(workloads, sizes, settings, device=index,
                             out_dir=None if no_certificate else out_dir, options=options,
                             on_result=show)
    if as_json:
        import json

        print_json(json.dumps([_json(r.ref, r.result, r.certificate) for r in done], indent=2))
    if not all(r.result.verdict.passed for r in done):
        click.get_current_context().exit(ExitStatus.FAILED)


def _json(ref: str, result: ProfileResult, certificate: Path | None) -> dict[str, Any]:
    return {"ref": ref, "results": result.to_json(), "verdict": result.verdict.to_json(),
            "certificate": None if certificate is None else str(certificate)}
