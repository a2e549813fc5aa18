"""What a new user meets first (issue 34, the smaller list): `graphcert` alone, the help of
every option, the hint `show` gives for a snapshot, and where `report -o` writes. On the
recorded snapshots and certificates; nothing here needs a GPU."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from _oneline import one_line
from click.testing import CliRunner, Result

from graphcert.cli import COMMANDS, cli

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "tests" / "fixtures" / "snapshots" / "scan-c1024.snapshot.json"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "120", "NO_COLOR": "1"},
                              prog_name="graphcert")


def test_graphcert_alone_prints_help_and_exits_0() -> None:
    result = run()
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Usage: graphcert [OPTIONS] COMMAND [ARGS]...")
    for name in COMMANDS:  # the list of commands is the help's point
        assert f"\n  {name} " in result.stdout, name
    assert result.stderr == ""
    assert run("--help").stdout == result.stdout  # the same help `--help` prints


def _options() -> list[tuple[str, click.Option]]:
    found = []
    for name in COMMANDS:
        command = cli.get_command(click.Context(cli), name)
        assert command is not None
        found += [(name, p) for p in command.params if isinstance(p, click.Option)]
    return found


@pytest.mark.parametrize(("command", "option"), _options(),
                         ids=lambda v: v if isinstance(v, str) else v.opts[0])
def test_every_option_has_help(command: str, option: click.Option) -> None:
    assert option.hidden or (option.help or "").strip(), \
        f"graphcert {command} {option.opts[0]} has no help text"
    text = run(command, "--help").stdout
    assert option.opts[0] in text


def test_bench_help_names_its_argument() -> None:
    text = " ".join(run("bench", "--help").stdout.split())
    assert "Usage: graphcert bench [OPTIONS] WORKLOADS..." in text
    assert "Time each of WORKLOADS" in text and "Time WORKLOAD " not in text


def test_show_of_a_snapshot_points_at_inventory() -> None:
    from graphcert.gate import display_path

    line = one_line(run("show", str(SNAPSHOT)))
    assert "is a graph snapshot, not a certificate" in line
    assert f"(show its nodes with graphcert inventory {display_path(SNAPSHOT)})" in line
    assert "diff" not in line
    shown = run("inventory", str(SNAPSHOT))  # and the hint works as written
    assert shown.exit_code == 0 and "scan" in shown.stdout


def test_report_into_a_missing_absolute_folder_creates_it_and_says_so(tmp_path: Path) -> None:
    """report -o /nonexistent/dir/x.html: the folders are made, and stderr names the first
    one made (the choice: create and say so, as gate --junit does; --help says it too)."""
    target = tmp_path / "nonexistent" / "dir" / "x.html"
    result = run("report", str(ROOT / "reports"), "-o", str(target))
    assert result.exit_code == 0, result.output
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert (f"graphcert: created the folder {tmp_path / 'nonexistent'} for {target}"
            in result.stderr)
    help_text = " ".join(run("report", "--help").stdout.split())
    assert "a missing folder on its way is created, and stderr names it" in help_text


def test_report_into_an_existing_folder_says_nothing_of_folders(tmp_path: Path) -> None:
    result = run("report", str(ROOT / "reports"), "-o", str(tmp_path / "x.html"))
    assert result.exit_code == 0, result.output
    assert "created the folder" not in result.stderr


def test_workloads_points_at_what_an_installed_graphcert_has() -> None:
    """The table's caption named examples/README.md, which the wheel does not ship: it points
    at `graphcert workloads --help`, which holds the protocol and names a module that ships."""
    import importlib.util

    listed = " ".join(run("workloads").stdout.split())
    assert "examples/README.md" not in listed
    assert "(see `graphcert workloads --help`)" in listed
    text = run("workloads", "--help").stdout
    for method in ("setup(ctx, capacity)", "record(stream, n)", "outputs(n)", "reference(n)",
                   "teardown()", "python -m pydoc graphcert.workloads.base"):
        assert method in text, method
    assert importlib.util.find_spec("graphcert.workloads.base") is not None
