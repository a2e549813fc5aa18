"""`graphcert verify`: topology stability across capacity classes, update and replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from graphcert.commands._options import device_option, json_option, signing_key_option


@click.command("verify")
@click.argument("workloads", nargs=-1, required=True)
@click.option("--classes", default="2^0..2^20", show_default=True,
              help="Capacity classes LO..HI (powers of two).")
@click.option("--samples", type=click.IntRange(min=2), default=4, show_default=True,
              help="Sizes per class: lower edge, upper edge and K-2 seeded between.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for sample sizes.")
@click.option("--mode", type=click.Choice(["global", "thread-local", "relaxed"]),
              default="global", show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("reports"), show_default=True,
              help="Where the topology certificates go.")
@click.option("--no-certificate", is_flag=True, help="Verify without writing certificates.")
@device_option
@signing_key_option
@json_option
def command(workloads: tuple[str, ...], classes: str, samples: int, seed: int, mode: str,
            out_dir: Path, no_certificate: bool, device: int, as_json: bool) -> None:
    """Prove that one graph per capacity class can be updated in place for every size in the
    class and still compute the right answer. Exits 1 if any class fails."""
    from graphcert.classes import parse_classes
    from graphcert.fileio import ensure_writable_dir
    from graphcert.workloads.registry import load

    capacities = parse_classes(classes)
    loaded = [(ref, load(ref)) for ref in workloads]  # bad references fail before GPU work
    if not no_certificate:
        ensure_writable_dir(out_dir)

    from graphcert.cuda.context import RunContext
    from graphcert.render.console import print_json, stderr_console, stdout_console
    from graphcert.render.verify import breakdown_table, class_table, transitions_table
    from graphcert.run import environment as certify
    from graphcert.run.verify import ClassReport, transitions, verify

    docs, failed = [], False
    err = stderr_console()
    with RunContext.open(device, seed=seed) as ctx:
        env = certify.environment(device) if not no_certificate else {}
        for ref, workload in loaded:
            def progress(report: ClassReport, ref: str = ref) -> None:
                err.print(f"{ref}: class {report.capacity:,} {report.status}", highlight=False)

            reports, phases, _ = verify(ctx, ref, capacities, samples=samples, seed=seed,
                                        mode=mode, workload=workload, on_class=progress)
            phases["compile"] = phases.get("compile", 0.0)
            results: dict[str, Any] = {"classes": [r.to_json() for r in reports],
                       "transitions": transitions(reports), "timings_s": phases,
                       "settings": {"samples": samples, "seed": seed, "mode": mode,
                                    "classes": classes}}
            reasons = [f"class {r.capacity:,}: {why}" for r in reports if r.status == "fail"
                       for why in r.reasons]
            passed = not reasons
            failed = failed or not passed
            path = None
            if not no_certificate:
                path = certify.write("topology", out_dir, ref, workload, env, results,
                                     reasons, passed)
            docs.append({"workload": ref, "passed": passed, "reasons": reasons,
                         "results": results, "certificate": str(path) if path else None})
            if not as_json:
                out = stdout_console()
                out.print(class_table(ref, reports))
                out.print(transitions_table(results["transitions"]))
                out.print(breakdown_table(phases))
                for why in reasons:
                    err.print(f"[red]FAIL[/] {ref}: {why}", highlight=False)
                if path:
                    err.print(f"certificate: {path}")
    if as_json:
        print_json(json.dumps(docs, indent=2))
    if failed:
        click.get_current_context().exit(1)
