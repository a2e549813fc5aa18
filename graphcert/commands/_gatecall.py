"""The one gate call `graphcert gate` and `graphcert report` share, so both reach the same
verdict from the same inputs: the policy, the workloads' source digests, graphcert's method
digests, the signing key and whether a signature is required (issue 29 item 6)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from graphcert.commands._options import PathParam
from graphcert.errors import ExitStatus, single_line

if TYPE_CHECKING:
    from graphcert.gate import GateRun


def gate_inputs(fn: Callable[..., None]) -> Callable[..., None]:
    """The options every command that runs the gate takes besides its PATHS."""
    for option in reversed((
        click.option("--baseline", type=PathParam(path_type=Path), default=None,
                     help="Folder of baseline certificates to compare with (topology, "
                          "timings)."),
        click.option("--policy", "policy_file", type=PathParam(path_type=Path), default=None,
                     help="TOML policy file (default: [tool.graphcert.gate] in "
                          "./pyproject.toml)."),
        click.option("--require-signature", is_flag=True,
                     help="Fail unsigned or wrongly signed certificates (also policy key "
                          "require_signature)."),
        click.option("--signing-key-file", type=PathParam(path_type=Path), default=None,
                     help="Key to check signatures with (default $GRAPHCERT_SIGNING_KEY_FILE "
                          "or $GRAPHCERT_SIGNING_KEY)."),
    )):
        fn = option(fn)
    return fn


def run_the_gate(ctx: click.Context, paths: tuple[Path, ...], *, baseline: Path | None,
                 policy_file: Path | None, require_signature: bool,
                 signing_key_file: Path | None) -> GateRun:
    """The gate's report over `paths`, with the typed certificates it judged; unusable input
    is one line per problem and exit 2."""
    from graphcert.cert.document import utc_now
    from graphcert.gate import UnusableInput, gate_run, load_policy
    from graphcert.options import Options
    from graphcert.workloads.registry import method_digest, source_digest

    policy = load_policy(policy_file)
    # the environment read here, at the command line, with the key the gate checks with
    options = Options.from_environ(os.environ, key_file=signing_key_file)
    key = options.signing_key
    for note in options.warnings:
        click.echo(f"graphcert: warning: {note}", err=True)
    try:
        return gate_run(list(paths), policy=policy, baseline=baseline, created=utc_now(),
                        digest_of=source_digest, method_of=method_digest, key=key,
                        require_signature=require_signature)
    except UnusableInput as exc:
        for problem in exc.problems:
            click.echo(f"graphcert: error: {single_line(problem)}", err=True)
        ctx.exit(ExitStatus.UNUSABLE)
        raise  # not reached: ctx.exit raises
