"""The one check every bad-input CLI test makes: exit 2, no traceback, one line on stderr."""

from __future__ import annotations

from click.testing import Result


def one_line(result: Result) -> str:
    """The single error line of a run that must exit 2 without a traceback or a usage block
    (click's own usage errors are several lines)."""
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert "Traceback" not in result.output and "Usage:" not in result.output, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    return lines[0]
