"""`bench --sweep ... --plot FILE`: the plot path, matplotlib and the image format are checked
while the command line is parsed (exit 2, one line, before any driver call), and the plot
is drawn into memory and written atomically, so no error leaves a file behind."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

import pytest
from click.testing import CliRunner, Result

from graphcert.cli import cli
from graphcert.errors import InputError
from graphcert.kinds.sweep.views import plot_sweep
from tests.cli.test_option_bounds import one_line
from tests.kinds.sweep.test_sweep import recorded_fit

pytestmark = pytest.mark.usefixtures("synthetic_cli", "no_driver")

SWEEP = ["bench", "chain", "--no-certificate", "--sweep", "kernels=1,10"]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, [*SWEEP, *args])


def test_plot_into_a_folder_or_under_a_file_is_refused_before_the_driver() -> None:
    Path("notes").write_text("a file\n")
    assert "--plot . is a folder" in one_line(run("--plot", "."))
    line = one_line(run("--plot", "notes/p.png"))
    assert "--plot notes/p.png cannot be written: notes is a file, not a folder" in line


def test_plot_without_matplotlib_is_refused_before_the_driver(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    line = one_line(run("--plot", "p.png"))
    assert "--plot needs matplotlib (pip install 'graphcert[plot]')" in line


def test_plot_in_a_format_matplotlib_cannot_draw_is_refused_before_the_driver() -> None:
    pytest.importorskip("matplotlib")
    line = one_line(run("--plot", "p.xyz"))
    assert "--plot p.xyz: matplotlib cannot draw 'xyz' images" in line and "png" in line
    result = run("--plot", "p.svg")  # a good plot reaches the GPU work
    assert result.exit_code == 3, result.output


def _fake_matplotlib(monkeypatch: pytest.MonkeyPatch, savefig: Any) -> None:
    """A stand-in matplotlib whose figure saves through `savefig`."""
    top: Any = ModuleType("matplotlib")
    pyplot: Any = ModuleType("matplotlib.pyplot")
    top.use = lambda backend: None
    figure = mock.MagicMock()
    figure.savefig.side_effect = savefig
    pyplot.subplots = lambda *a, **k: (figure, [mock.MagicMock() for _ in range(3)])
    pyplot.close = lambda fig: None
    top.pyplot = pyplot
    monkeypatch.setitem(sys.modules, "matplotlib", top)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", pyplot)


def test_a_plot_that_fails_midway_leaves_no_file(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    def full_disk(target: Any, **kw: Any) -> None:  # writes part of the image, then fails
        if hasattr(target, "write"):
            target.write(b"\x89PNG partial")
        else:
            Path(target).write_bytes(b"\x89PNG partial")
        raise OSError(28, "No space left on device")

    _fake_matplotlib(monkeypatch, full_disk)
    folder = tmp_path / "plots"
    folder.mkdir()
    with pytest.raises(InputError, match="No space left on device"):
        plot_sweep(recorded_fit(), folder / "sweep.png")
    assert list(folder.iterdir()) == []


def test_a_plot_is_written_whole_in_the_format_its_name_gives(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    formats: list[str] = []

    def draw(target: Any, **kw: Any) -> None:
        formats.append(kw["format"])
        target.write(f"image/{kw['format']}".encode())

    _fake_matplotlib(monkeypatch, draw)
    for name in ("sweep.svg", "sweep.PDF", "sweep"):
        plot_sweep(recorded_fit(), tmp_path / name)
    assert formats == ["svg", "pdf", "png"]
    assert (tmp_path / "sweep.svg").read_bytes() == b"image/svg"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep", "sweep.PDF", "sweep.svg"]
