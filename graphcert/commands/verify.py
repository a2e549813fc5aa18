"""`graphcert verify`: topology stability across capacity classes, update and replay."""

from __future__ import annotations

from pathlib import Path

import click

from graphcert.commands._fleet import fleet_capable
from graphcert.commands._options import (
    Bounded,
    certificate_options,
    device_option,
    invocation,
    json_option,
    signing_key_option,
)
from graphcert.errors import ExitStatus


@click.command("verify")
@click.argument("workloads", nargs=-1, required=True)
@click.option("--classes", default="2^0..2^20", show_default=True,
              help="Capacity classes LO..HI (powers of two), a bucket list "
              "1,2,4,8,16,24,32, or vllm:MAX / sglang:MAX (those engines' capture sizes).")
@click.option("--samples", type=Bounded(int, 2, 1000), default=4, show_default=True,
              help="Sizes per class: lower edge, upper edge and K-2 seeded between.")
# numpy's generators take non-negative seeds; 32 bits is every seed anyone types
@click.option("--seed", type=Bounded(int, 0, 2 ** 32 - 1), default=0, show_default=True,
              help="Seed for sample sizes.")
@click.option("--mode", type=click.Choice(["global", "thread-local", "relaxed"]),
              default="global", show_default=True,
              help="Stream capture mode (a framework step uses its framework's own capture).")
@certificate_options("Where the topology certificates go.",
                     "Verify without writing certificates.")
@device_option
@signing_key_option
@json_option
@fleet_capable("verify")
def command(workloads: tuple[str, ...], classes: str, samples: int, seed: int, mode: str,
            out_dir: Path, no_certificate: bool, device: int, as_json: bool) -> None:
    """Prove that one graph per capacity class can be updated in place for every size in the
    class and still compute the right answer. Exits 1 if any class fails or could not run
    (a class too large for device memory makes the verdict incomplete, never a pass)."""
    from graphcert.buckets import parse_buckets
    from graphcert.cert.results.verdict import Status
    from graphcert.kinds.topology.result import AnyClass, VerifyResult
    from graphcert.kinds.topology.views import verify_json, verify_view
    from graphcert.render.console import print_json
    from graphcert.render.progress import progress
    from graphcert.run.jobs import Certified, verify_workloads

    capacities = parse_buckets(classes)
    inv = invocation()
    err = inv.err

    # A class that fails or is skipped like the one before it is counted, not printed again:
    # a step that fails the same way in every bucket gives one line and a count, and the
    # verdict below says why once.
    held: dict[str, tuple[str, int]] = {}

    def each_class(ref: str, cls: AnyClass) -> None:
        status = str(cls.status)
        before = held.get(ref)
        if before is not None and before[0] == status and status != "pass":
            held[ref] = (status, before[1] + 1)
            return
        counted(ref)
        err.print(f"{ref}: class {cls.capacity:,} {status}", highlight=False)
        held[ref] = (status, 0)

    def counted(ref: str) -> None:
        status, more = held.pop(ref, ("", 0))
        if more:
            err.print(f"{ref}: {more} more class{'es' * (more != 1)} {status}", highlight=False)

    def show(done: Certified[VerifyResult]) -> None:
        counted(done.ref)
        if as_json:
            return
        out = inv.out
        for item in verify_view(done.ref, done.result):
            out.print(item)
        # a skipped class's reason is INCOMPLETE even when another class failed the verdict
        for status, why in done.result.verdict.labelled():
            label = "[red]FAIL[/]" if status is Status.FAIL else "[yellow]INCOMPLETE[/]"
            err.print(f"{label} {done.ref}: {why}", highlight=False)
        if done.certificate:
            err.print(f"certificate: {done.certificate}")

    total = len(workloads) * len(capacities) * samples  # classes x samples, every workload
    options = inv.options
    with progress(total, "verify", options, inv.events, console=err) as advance:
        runs = verify_workloads(workloads, capacities, samples=samples, seed=seed, mode=mode,
                                classes_spec=classes, device=device,
                                out_dir=None if no_certificate else out_dir, options=options,
                                on_class=each_class, on_result=show, on_progress=advance)
    if as_json:
        print_json(verify_json([(r.ref, r.result, r.certificate) for r in runs]))
    if not all(r.result.verdict.passed for r in runs):
        click.get_current_context().exit(ExitStatus.FAILED)
