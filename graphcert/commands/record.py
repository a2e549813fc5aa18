"""`graphcert record [OPTIONS] -- python SCRIPT ARGS` (or `-- python -m MODULE ARGS`): run a
program in this process under CUPTI and certify every graph it made and launched, its
dispatch coverage and churn (issue 32). The program's exit code is graphcert's."""

from __future__ import annotations

from pathlib import Path

import click

from graphcert.commands._options import (
    certificate_options,
    invocation,
    json_option,
    resolve_device,
    signing_key_option,
    single_device_option,
)


@click.command("record", context_settings={"ignore_unknown_options": True,
                                           "allow_interspersed_args": False})
@certificate_options("Where the record certificate (and its snapshots folder) goes.",
                     "Record and print without writing a certificate.")
@single_device_option
@signing_key_option
@json_option
@click.argument("program", nargs=-1, type=click.UNPROCESSED, required=True)
def command(out_dir: Path, no_certificate: bool, device: int | None, as_json: bool,
            program: tuple[str, ...]) -> None:
    """Run PROGRAM (python SCRIPT ARGS or python -m MODULE ARGS, after `--`) in this process
    with its own sys.argv and output, recording every graph executable it instantiates and
    launches, the kernels graphs launched against those launched one by one, and churn.
    Exits with the program's exit code (130 on Ctrl-C, 143 on SIGTERM)."""
    options = invocation().options
    index = resolve_device(device, options)

    import json

    from graphcert.kinds.record.views import record_view
    from graphcert.render.console import print_json
    from graphcert.run.record import record_program

    done = record_program(program, out_dir=None if no_certificate else out_dir,
                          options=options, device=index)
    err = invocation().err
    if as_json:
        print_json(json.dumps({"results": done.result.to_json(),
                               "verdict": done.result.verdict.to_json(),
                               "certificate": None if done.certificate is None
                               else str(done.certificate)}, indent=2))
    else:  # the program owns stdout: graphcert's summary goes to stderr
        for part in record_view(done.result):
            err.print(part)
    for line in done.callback_errors[:3]:
        err.print(f"graphcert record: a CUPTI callback failed: {line}", markup=False,
                  highlight=False)
    if done.certificate is not None:
        err.print(f"certificate: {done.certificate}", markup=False, highlight=False)
    click.get_current_context().exit(done.result.exit_code)
