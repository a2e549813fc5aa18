"""The one gate call `graphcert gate` and `graphcert report` share, so both reach the same
verdict from the same inputs: the policy, the workloads' source digests, graphcert's method
digests, the signing key and whether a signature is required."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from graphcert.commands._options import PathParam, invocation
from graphcert.errors import single_line

if TYPE_CHECKING:
    from graphcert.cert.signing import SigningKey
    from graphcert.gate import GateRun, UnusableReport


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


def gate_outcome(paths: tuple[Path, ...], *, baseline: Path | None,
                 policy_file: Path | None, require_signature: bool,
                 signing_key_file: Path | None) -> GateRun | UnusableReport:
    """The gate over `paths`: its run, or (exit 2) the report of the inputs it could not use,
    each also printed as one line on stderr."""
    from graphcert.cert.document import utc_now
    from graphcert.gate import UnusableReport, judge
    from graphcert.workloadref import method_digest, source_digest

    def key() -> SigningKey | None:
        # the key the gate checks with: --signing-key-file, else the invocation's variables
        options = invocation().signed(signing_key_file).options
        for note in options.warnings:
            click.echo(f"graphcert: warning: {note}", err=True)
        return options.signing_key

    outcome = judge(list(paths), policy_file=policy_file, baseline=baseline,
                    created=utc_now(), digest_of=source_digest, method_of=method_digest,
                    key=key, require_signature=require_signature)
    if isinstance(outcome, UnusableReport):
        for problem in outcome.problems:
            click.echo(f"graphcert: error: {single_line(problem)}", err=True)
    return outcome


def run_the_gate(ctx: click.Context, paths: tuple[Path, ...], *, baseline: Path | None,
                 policy_file: Path | None, require_signature: bool,
                 signing_key_file: Path | None) -> GateRun:
    """The gate's run over `paths`, with the typed certificates it judged; unusable input
    is one line per problem and exit 2."""
    from graphcert.gate import GateRun

    outcome = gate_outcome(paths, baseline=baseline, policy_file=policy_file,
                           require_signature=require_signature,
                           signing_key_file=signing_key_file)
    if not isinstance(outcome, GateRun):
        ctx.exit(outcome.exit_code)
    assert isinstance(outcome, GateRun)  # ctx.exit raised otherwise
    return outcome
