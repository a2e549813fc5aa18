"""Numeric options of bench, verify and inventory are checked while the command line is
parsed (graphcert.commands._options.Bounded): NaN, infinity, out of range or not a number is
one line and exit 2 before any driver call, never the no-driver exit 3 and never a run that
cannot end. The driver is made absent, so a good option set shows where the GPU work starts."""

from __future__ import annotations

import pytest
from _oneline import one_line
from click.testing import CliRunner, Result

from graphcert.cli import cli
from graphcert.commands._options import Bounded
from graphcert.errors import InputError

pytestmark = pytest.mark.usefixtures("synthetic_cli", "no_driver")


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))



BENCH = ["bench", "chain", "--no-certificate"]


@pytest.mark.parametrize(("option", "value", "why"), [
    ("--max-noise", "nan", "is not a finite number"),
    ("--max-noise", "inf", "is not a finite number"),
    ("--max-noise", "-0.1", "is out of range"),
    ("--max-noise", "0", "is out of range"),  # a target never met: every timing times out
    ("--max-noise", "5", "is out of range"),  # 5 is 500%, not 5%
    ("--min-time", "nan", "is not a finite number"),
    ("--min-time", "inf", "is not a finite number"),
    ("--min-time", "-1", "is out of range"),
    ("--min-time", "1e300", "is out of range"),
    ("--timeout", "nan", "is not a finite number"),
    ("--timeout", "inf", "is not a finite number"),
    ("--timeout", "1e400", "is not a finite number"),  # float overflows to inf
    ("--timeout", "0", "is out of range"),
    ("--timeout", "abc", "'abc' is not a number"),
    ("--blocker-timeout", "inf", "is not a finite number"),
    ("--blocker-timeout", "1e30", "is out of range"),
    ("--min-samples", "1", "is out of range"),
    ("--min-samples", "9" * 30, "is out of range"),
    ("--min-samples", "2.5", "'2.5' is not an integer"),
    ("--placements", "0", "is out of range"),
    ("--placements", "100000000000000000000", "is out of range"),
    ("--placements", "nan", "'nan' is not an integer"),
])
def test_bench_refuses_a_bad_number_before_the_driver(option: str, value: str,
                                                      why: str) -> None:
    line = one_line(run(*BENCH, option, value))
    assert line.startswith(f"graphcert: error: {option} ") and why in line
    assert "(give " in line  # and says what a good value is


@pytest.mark.parametrize(("args", "why"), [
    (["--samples", "nan"], "--samples 'nan' is not an integer"),
    (["--samples", "99999999999999999999"], "--samples 99999999999999999999 is out of range"),
    (["--samples", "1"], "--samples 1 is out of range"),
    (["--seed", "-1"], "--seed -1 is out of range"),  # numpy refuses negative seeds
    (["--seed", str(2 ** 40)], "is out of range"),
])
def test_verify_refuses_a_bad_number_before_the_driver(args: list[str], why: str) -> None:
    assert why in one_line(run("verify", "chain", "--no-certificate", *args))


@pytest.mark.parametrize("command", [["inventory", "chain", "--size", "8"], ["capture", "chain"],
                                     ["verify", "chain"], ["bench", "chain"]])
def test_every_device_option_refuses_a_huge_index_alike(command: list[str]) -> None:
    """inventory's --device is the shared one: the same parse and words as capture's,
    verify's and bench's (which also take `all` and lists), before the driver."""
    line = one_line(run(*command, "--device", "9" * 25))
    assert line.startswith("graphcert: error: --device='9999999999999999999999999' is not a "
                           "device index")


def test_inventory_device_is_one_gpu() -> None:
    line = one_line(run("inventory", "chain", "--size", "8", "--device", "all"))
    assert "--device='all' names several GPUs; inventory runs on one" in line
    assert "--device 0" in line
    line = one_line(run("inventory", "chain", "--size", "8", "--device", "0,1"))
    assert "names several GPUs" in line


def test_every_device_option_says_the_same() -> None:
    """One help text stem, one default, for every command that takes --device."""
    import click

    from graphcert.cli import COMMANDS

    seen = {}
    for name in COMMANDS:
        command = cli.get_command(click.Context(cli), name)
        assert command is not None
        for param in command.params:
            if isinstance(param, click.Option) and "--device" in param.opts:
                seen[name] = (param.help or "", param.show_default)
    assert set(seen) == {"capture", "inventory", "verify", "bench", "plan", "profile",
                         "record"}
    for text, default in seen.values():
        assert text.startswith("CUDA device index (see `graphcert env`)")
        assert default == "$GRAPHCERT_DEVICE or 0"


def test_a_long_literal_is_cut_in_the_message() -> None:
    line = one_line(run(*BENCH, "--timeout", "1" * 5000))
    assert "is not a number" in line and len(line) < 200


@pytest.mark.parametrize(("sweep", "why"), [
    ("kernels=0,10", "--sweep kernels 0 is out of range"),  # the plot divides by it
    ("kernels=-5,10", "--sweep kernels -5 is out of range"),
    ("kernels=1,x", "--sweep kernels 'x' is not an integer"),
    ("kernels=1,1e3", "--sweep kernels '1e3' is not an integer"),
    ("kernels=1," + "9" * 60, "is not an integer"),
    ("kernels=10,1,10", "--sweep kernels gives 10 twice"),
    ("kernels=10", "gives 1 value(s); a + b·value needs two or more"),
    ("kernels=,", "gives 0 value(s)"),
])
def test_sweep_values_are_checked_before_the_driver(sweep: str, why: str) -> None:
    assert why in one_line(run(*BENCH, "--sweep", sweep))


@pytest.mark.parametrize("args", [
    [*BENCH, "--max-noise", "1", "--min-time", "0", "--timeout", "3600", "--min-samples", "2",
     "--blocker-timeout", "1e-6", "--placements", "1024", "--sweep", "kernels=1,10"],
    ["verify", "chain", "--no-certificate", "--samples", "1000", "--seed", str(2 ** 32 - 1)],
    ["inventory", "chain", "--size", "8", "--device", "999999"],
])
def test_good_values_reach_the_driver(args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 3, result.output
    assert "no NVIDIA driver found" in result.stderr


def test_bounded_takes_python_numbers_and_refuses_bools() -> None:
    seconds = Bounded(float, 0.01, 10, unit="seconds")
    assert seconds.check(2, "--t") == 2.0 and isinstance(seconds.check(2, "--t"), float)
    with pytest.raises(InputError, match="--t True is not a number"):
        seconds.check(True, "--t")
    count = Bounded(int, 1, 5)
    with pytest.raises(InputError, match=r"--n 2\.0 is not an integer"):
        count.check(2.0, "--n")
    assert count.check(" 5 ", "--n") == 5
