"""Issue 28 item 5 (paths) and 11: every output path is checked before any work, a write
that fails names the file, and a folder made for an output is said on stderr. Each bad path
is one line and exit 2, never a traceback and exit 1."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from _certfactory import certificate
from _oneline import one_line
from click.testing import CliRunner, Result

import graphcert
from graphcert.cert.document import write_certificate
from graphcert.cli import cli
from graphcert.fileio import atomic_write_text

pytestmark = pytest.mark.usefixtures("synthetic_cli")
SNAPSHOT = (Path(__file__).resolve().parents[1] / "fixtures" / "snapshots"
            / "chain-c256.snapshot.json")


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))



@pytest.fixture(autouse=True)
def reports(tmp_path: Path) -> Path:
    write_certificate(tmp_path / "reports" / "t.json", certificate("topology"))
    return tmp_path / "reports"


def test_report_output_under_a_file(tmp_path: Path) -> None:
    Path("notes.txt").write_text("a file\n")
    line = one_line(run("report", "reports", "-o", "notes.txt/r.html"))
    assert line == ("graphcert: error: -o notes.txt/r.html cannot be written: notes.txt is a "
                    "file, not a folder (give a path in a folder)")


@pytest.mark.parametrize("args", [["report", "reports", "-o", "x" * 300 + ".html"],
                                  ["gate", "reports", "--junit", "j" * 5000],
                                  ["gate", "reports", "--summary", "d/" * 2500 + "s.md"]])
def test_output_name_too_long(args: list[str]) -> None:
    line = one_line(run(*args))
    assert "cannot be written: File name too long" in line and len(line) < 400


def test_input_path_too_long() -> None:
    line = one_line(run("gate", "p" * 5000))
    assert "cannot be read: File name too long" in line and len(line) < 400


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_report_output_in_a_read_only_folder(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    line = one_line(run("report", "reports", "-o", "locked/r.html"))
    assert line == ("graphcert: error: -o locked/r.html cannot be written: its folder is not "
                    "writable")


def test_report_output_in_a_new_folder_is_created_and_said() -> None:
    result = run("report", "reports", "-o", "new/deeper/r.html")
    assert result.exit_code == 0, result.output
    assert Path("new/deeper/r.html").read_text().startswith("<!DOCTYPE html>")
    assert "graphcert: created the folder new for new/deeper/r.html" in result.stderr


def test_gate_output_in_a_new_folder_is_said() -> None:
    result = run("gate", "reports", "--junit", "ci/out/j.xml")
    assert result.exit_code == 0, result.output
    assert "graphcert: created the folder ci for ci/out/j.xml" in result.stderr


def _disk_full(monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)


@pytest.mark.parametrize("args,option,name", [
    (["report", "reports", "-o", "r.html"], "-o", "r.html"),
    (["gate", "reports", "--junit", "j.xml"], "--junit", "j.xml"),
    (["gate", "reports", "--summary", "s.md"], "--summary", "s.md"),
])
def test_disk_full_names_the_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                  args: list[str], option: str, name: str) -> None:
    _disk_full(monkeypatch)
    result = CliRunner().invoke(cli, args)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert lines[-1] == (f"graphcert: error: {option} {name} cannot be written: No space "
                         f"left on device")
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())


def test_oserror_of_a_write_names_the_target_not_the_temp_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _disk_full(monkeypatch)
    with pytest.raises(OSError) as info:
        atomic_write_text(tmp_path / "c.json", "{}")
    assert info.value.filename == str(tmp_path / "c.json")


def test_a_long_name_the_file_system_takes_is_written(tmp_path: Path) -> None:
    """The temp file's name is longer than the target's: it must still fit in 255 bytes."""
    path = tmp_path / ("n" * 250 + ".json")
    atomic_write_text(path, "{}")
    assert path.read_text() == "{}"
    assert not any(name.endswith(".tmp") for name in os.listdir(tmp_path))
    snap = graphcert.load(SNAPSHOT)
    assert graphcert.save(snap, tmp_path / ("s" * 250 + ".json")).exists()
