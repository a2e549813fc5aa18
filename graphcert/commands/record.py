"""`graphcert record [OPTIONS] -- COMMAND [ARGS...]`: run any command as its own process tree
under the CUDA injection collector and certify every graph each of its processes made and
launched, its dispatch coverage and churn. The command's exit code is graphcert's."""

from __future__ import annotations

from pathlib import Path

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

MAX_GRACE_S = 3600


@click.command("record", context_settings={"ignore_unknown_options": True,
                                           "allow_interspersed_args": False})
@certificate_options("Where the record certificate (and its snapshots folder) goes.",
                     "Record and print without writing a certificate.")
@single_device_option
@signing_key_option
@json_option
@click.option("--keep-streams", "keep_streams", type=click.Path(path_type=Path),
              default=None, metavar="DIR",
              help="Keep each process's stream (a run-* folder in DIR) instead of removing "
                   "them after the certificate is written.")
@click.option("--grace", type=Bounded(float, 0, MAX_GRACE_S, unit="seconds"), default=5.0,
              show_default=True, metavar="SECONDS",
              help="How long to wait, after the command's own process ended, for its other "
                   "processes to end; those still running are marked outlived.")
@click.option("--source", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              default=None, metavar="FILE",
              help="The file the gate digests to tell whether the certificate is stale "
                   "(default: the Python script, else the command's executable): a native "
                   "program's source, say.")
@click.argument("program", nargs=-1, type=click.UNPROCESSED, required=True,
                metavar="-- COMMAND [ARGS]...")
def command(out_dir: Path, no_certificate: bool, device: int | None, as_json: bool,
            keep_streams: Path | None, grace: float, source: Path | None,
            program: tuple[str, ...]) -> None:
    """Run COMMAND (after `--`: python app.py ARGS, python -m pkg, a console script, a
    native binary) as its own process tree and record every process of it that initialises
    CUDA (children, workers, native code): each graph executable instantiated and launched,
    the kernels graphs launched against those launched one by one, and churn. stdin, stdout
    and stderr are the command's; Ctrl-C and SIGTERM are passed to it.

    Inside a Python program, `with graphcert.record():` records only that process, in
    place. Exits with the command's exit code (128 + N when signal N ended it: 130 on
    Ctrl-C, 143 on SIGTERM); 127 when the command is not found, 126 when it cannot run."""
    options = invocation().options
    index = resolve_device(device, options)

    import json

    from graphcert.kinds.record.views import record_view
    from graphcert.render.console import print_json
    from graphcert.run.record_run import record_command

    done = record_command(program, out_dir=None if no_certificate else out_dir,
                          options=options, device=index, keep_streams=keep_streams,
                          grace=grace, source=source)
    err = invocation().err
    for line in done.notes:
        err.print(line, markup=False, highlight=False)
    if as_json:
        print_json(json.dumps({"results": done.result.to_json(),
                               "verdict": done.result.verdict.to_json(),
                               "certificate": None if done.certificate is None
                               else str(done.certificate)}, indent=2))
    else:  # the command owns stdout: graphcert's summary goes to stderr
        for part in record_view(done.result):
            err.print(part)
    if done.streams is not None:
        err.print(f"streams: {done.streams}", markup=False, highlight=False)
    if done.certificate is not None:
        err.print(f"certificate: {done.certificate}", markup=False, highlight=False)
    click.get_current_context().exit(done.result.exit_code)
