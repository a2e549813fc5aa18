"""What a user meets at every width (issue 34 items 1-3): `gate`, `show` (topology, bench,
sweep) and `inventory` at 60, 80, 120 and 200 columns, on a terminal and piped, with and
without FORCE_COLOR, against golden files under tests/golden/widths/.

The inputs are recorded: the certificates committed under reports/ and the CuPy snapshot
under tests/fixtures/sources/. Every path and hash of the input (and every figure the views
print from it) must appear whole: never split across lines, never cut behind "…". On a
terminal a line is at most the width, unless it is one token wider than the terminal; no
line ends with a space; colour changes no layout (the coloured output, its colour codes
taken out, is the plain golden); piped output is laid out the same at every width.

Regenerate the goldens with GRAPHCERT_UPDATE_GOLDEN=1 and read the diff before committing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from graphcert.cert.results.figures import QUANTITIES, SIDES
from graphcert.cert.store import load_certificate
from graphcert.cli import cli
from graphcert.kinds.bench.result import BenchResult
from graphcert.kinds.sweep.result import SweepFit
from graphcert.kinds.topology.result import VerifyResult
from graphcert.model import NodeKind, load_snapshot
from graphcert.model.jsontext import short_hash
from graphcert.render import console as consoles
from graphcert.render.names import short_name
from graphcert.render.numbers import us
from tests._env import committed_report
from tests._golden import check_golden

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "widths"
WIDTHS = (60, 80, 120, 200)
CUPY = "tests/fixtures/sources/cupy-axpb.snapshot.json"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


CASES = {
    "gate": ("gate", "reports/"),
    "show-topology": ("show", _rel(committed_report("topology", "chain"))),
    "show-bench": ("show", _rel(committed_report("bench", "chain"))),
    # a bench certificate with a figure that ended on its timeout (reports/ of 2026-11-27:
    # decode's graph host enqueue)
    "show-bench-timeout": ("show", _rel(committed_report("bench", "decode"))),
    "show-sweep": ("show", _rel(committed_report("sweep", "chain_kernels"))),
    "inventory": ("inventory", CUPY),
}


def _certificate_tokens(path: str) -> Iterator[str]:
    """What `show` must print whole for one certificate: its path, digest, GPU UUID and
    commit, each class's hashes and sampled sizes, each figure, each swept certificate."""
    cert = load_certificate(ROOT / path)
    yield path
    yield cert.digest
    if cert.environment.gpu.uuid:
        yield cert.environment.gpu.uuid
    result = cert.result
    if isinstance(result, VerifyResult):
        for c in result.classes:
            for h in (getattr(c, "topology_hash", None), getattr(c, "shape_hash", None)):
                if h:
                    yield short_hash(h)
            yield from (str(s.n) for s in getattr(c, "samples", ()))
    elif isinstance(result, SweepFit):
        yield from result.certificates
        if result.plot:
            yield result.plot
    elif isinstance(result, BenchResult):
        for row in result.sizes:
            for side in SIDES:
                for quantity in QUANTITIES:
                    timing = row.way(side).get(quantity)
                    if timing is not None:
                        yield us(timing.median_s)
                        yield f"±{timing.half_width:.2%}" if timing.half_width is not None \
                            else f"{timing.noise:.2%} sd"


def tokens(case: str) -> list[str]:
    """Every token of the case's input that the output must hold whole."""
    command, target = CASES[case]
    if command == "gate":
        return sorted(_rel(p) for p in (ROOT / "reports").glob("*.json"))
    if command == "show":
        return list(_certificate_tokens(target))
    snap = load_snapshot(ROOT / target)
    names = [short_name(n.name) for n in snap.nodes if n.kind is NodeKind.KERNEL and n.name]
    return [*names, short_hash(snap.topology_hash), short_hash(snap.shape_hash)]


def run_as_user(monkeypatch: pytest.MonkeyPatch, case: str, *, width: int, terminal: bool,
                colour: bool) -> str:
    """The case's stdout as a user at a `width`-column terminal (or a pipe) would get it."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    if colour:
        monkeypatch.setenv("FORCE_COLOR", "1")
    else:
        monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setattr(consoles, "isatty", lambda stream: terminal)
    # each invocation makes its consoles from this environment
    result = CliRunner().invoke(cli, list(CASES[case]), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "FORCE_COLOR"])
@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "piped"])
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_width(monkeypatch: pytest.MonkeyPatch, case: str, width: int, terminal: bool,
                     colour: bool) -> None:
    out = run_as_user(monkeypatch, case, width=width, terminal=terminal, colour=colour)
    # colour follows FORCE_COLOR, else the terminal; it never decides the layout
    assert ("\x1b[" in out) == (colour or terminal)
    plain = ANSI.sub("", out)
    check_golden(GOLDEN / f"{case}-{width if terminal else 'piped'}.txt", plain)
    lines = plain.splitlines()
    # on a terminal too narrow for a path, the gate names the folder once and each file in it
    folder = re.search(r"^files in (\S+/)$", plain, re.MULTILINE)
    for token in tokens(case):
        shown = token.removeprefix(folder[1]) if folder else token
        assert any(shown in line for line in lines), f"{token!r} is not whole at {width}"
    assert not [line for line in lines if line != line.rstrip()], "a line ends with spaces"
    if terminal:  # only a token wider than the terminal may stand past its edge, alone
        wide = [line for line in lines if cell_len(line) > width]
        assert all(" " not in line.strip() for line in wide), wide


def test_the_issue_examples_stay_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The breaks the issue quotes: a gate path over four lines at 80 columns, hashes and
    headers split at 120, bench cells cut behind "…" at 80, and a sample list printed with
    thousands separators (`1,025,1,276,1,715,2,048`)."""
    gate = run_as_user(monkeypatch, "gate", width=80, terminal=True, colour=False)
    assert "reports/bench-chain-NVIDIA_H200.json" in ANSI.sub("", gate)
    topology = ANSI.sub("", run_as_user(monkeypatch, "show-topology", width=120,
                                        terminal=True, colour=False))
    assert "predicted" in topology and "predi\n" not in topology
    assert "1025, 1276, 1715, 2048" in topology and "1,025" not in topology
    bench = ANSI.sub("", run_as_user(monkeypatch, "show-bench-timeout", width=80,
                                     terminal=True, colour=False))
    assert "quantity" in bench and "(timeout)" in bench and "…" not in bench


def test_force_colour_through_a_pipe_is_laid_out_as_a_pipe(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`FORCE_COLOR=1 graphcert gate reports/ | cat` (item 2): one row per certificate, as
    without colour, at any COLUMNS."""
    piped = run_as_user(monkeypatch, "gate", width=80, terminal=False, colour=False)
    coloured = run_as_user(monkeypatch, "gate", width=80, terminal=False, colour=True)
    assert ANSI.sub("", coloured) == piped
    rows = [line for line in piped.splitlines() if line.startswith(("PASS", "FAIL", "WARN"))]
    assert len(rows) == len(tokens("gate"))
    assert all(any(path in row for row in rows) for path in tokens("gate"))


def test_show_and_diff_print_a_figure_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 3: a timing reads the same in `show` and in `diff` (µs, two decimals), and a
    class's capacity the same (as typed, no thousands separator)."""
    a, b = (_rel(committed_report("bench", w)) for w in ("chain_kernels_1", "chain_kernels_10"))
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")
    diff = CliRunner().invoke(cli, ["diff", a, b], catch_exceptions=False).stdout
    show = CliRunner().invoke(cli, ["show", a], catch_exceptions=False).stdout
    topo = _rel(committed_report("topology", "chain"))
    classes = CliRunner().invoke(cli, ["diff", topo, topo], catch_exceptions=False).stdout
    result = load_certificate(ROOT / a).result
    assert isinstance(result, BenchResult)
    figure = us(result.sizes[0].stream.end_to_end.median_s)
    assert figure in diff and figure in show
    assert " 1048576 " in f" {classes} " and "1,048,576" not in classes
