"""Issue 28 item 3: a write never replaces a special file. A FIFO or character device the
user named is written through, a symlink to a regular file keeps being a link (its target is
replaced), and a folder, socket or broken link is refused with one line."""

from __future__ import annotations

import os
import socket
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from _certfactory import certificate
from _oneline import one_line
from click.testing import CliRunner, Result

from graphcert.cert.document import write_certificate
from graphcert.cli import cli
from graphcert.errors import InputError
from graphcert.fileio import atomic_write_text

pytestmark = pytest.mark.usefixtures("synthetic_cli")


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))



class FifoReader:
    """A thread that opens a FIFO for reading and keeps everything written to it."""

    def __init__(self, path: Path):
        self.path = path
        self.data = b""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with open(self.path, "rb") as handle:
            self.data = handle.read()

    def result(self) -> bytes:
        self.thread.join(timeout=10)
        assert not self.thread.is_alive(), "the FIFO was never written and closed"
        return self.data


@pytest.fixture()
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "out.fifo"
    os.mkfifo(path)
    yield path
    try:  # a reader the test left waiting gets its end of file
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass  # no reader waiting (ENXIO), or the FIFO is gone


@pytest.fixture()
def reports(tmp_path: Path) -> Path:
    write_certificate(tmp_path / "reports" / "t.json", certificate("topology"))
    return tmp_path / "reports"


def test_write_to_a_fifo_goes_through_and_keeps_the_fifo(fifo: Path) -> None:
    reader = FifoReader(fifo)
    atomic_write_text(fifo, "through the pipe\n")
    assert reader.result() == b"through the pipe\n"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert os.listdir(fifo.parent) == [fifo.name]  # no temp file left beside it


@pytest.mark.parametrize("option", ["--junit", "--summary"])
def test_gate_output_into_a_fifo_keeps_the_fifo(reports: Path, fifo: Path, option: str) -> None:
    reader = FifoReader(fifo)
    result = run("gate", str(reports), option, str(fifo))
    assert result.exit_code == 0, result.output
    assert reader.result().strip()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_report_into_a_fifo_keeps_the_fifo(reports: Path, fifo: Path) -> None:
    reader = FifoReader(fifo)
    result = run("report", str(reports), "-o", str(fifo))
    assert result.exit_code == 0, result.output
    assert reader.result().startswith(b"<!DOCTYPE html>")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/null") or not os.access("/dev/null", os.W_OK),
                    reason="no writable /dev/null here")
@pytest.mark.parametrize("args", [["report", "reports", "-o", "/dev/null"],
                                  ["gate", "reports", "--junit", "/dev/null"]])
def test_dev_null_stays_a_character_device(reports: Path, args: list[str]) -> None:
    before = os.stat("/dev/null")
    result = run(*args)
    assert result.exit_code == 0, result.output
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


@pytest.mark.skipif(not os.path.exists("/dev/full") or not os.access("/dev/full", os.W_OK),
                    reason="no writable /dev/full here")
@pytest.mark.parametrize("args,option", [(["report", "reports", "-o"], "-o"),
                                         (["gate", "reports", "--junit"], "--junit")])
def test_full_device_is_one_line_naming_it(reports: Path, args: list[str], option: str
                                           ) -> None:
    line = one_line(run(*args, "/dev/full"))
    assert line == (f"graphcert: error: {option} /dev/full cannot be written: No space left "
                    f"on device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_symlink_to_a_file_keeps_the_link_and_replaces_its_target(tmp_path: Path) -> None:
    target = tmp_path / "real" / "report.html"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "report.html"
    link.symlink_to(target)
    atomic_write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"
    assert sorted(os.listdir(target.parent)) == ["report.html"]


def test_symlink_to_a_fifo_is_written_through(tmp_path: Path, fifo: Path) -> None:
    link = tmp_path / "j.xml"
    link.symlink_to(fifo)
    reader = FifoReader(fifo)
    atomic_write_text(link, "x")
    assert reader.result() == b"x"
    assert link.is_symlink() and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_broken_symlink_is_refused_and_left_alone(tmp_path: Path) -> None:
    link = tmp_path / "out.html"
    link.symlink_to(tmp_path / "missing" / "x.html")
    with pytest.raises(InputError, match="is a symlink to a missing file"):
        atomic_write_text(link, "x")
    assert link.is_symlink() and not (tmp_path / "missing").exists()


def test_report_to_a_broken_symlink_is_one_line(reports: Path, tmp_path: Path) -> None:
    link = tmp_path / "r.html"
    link.symlink_to(tmp_path / "gone.html")
    assert "-o r.html is a symlink to a missing file" in one_line(run("report", "reports",
                                                                       "-o", "r.html"))
    assert link.is_symlink() and not (tmp_path / "gone.html").exists()


def test_a_folder_target_is_refused_and_kept(tmp_path: Path) -> None:
    (tmp_path / "d" / "inner").mkdir(parents=True)
    with pytest.raises(InputError, match="is a folder, which graphcert never replaces"):
        atomic_write_text(tmp_path / "d", "x")
    assert (tmp_path / "d" / "inner").is_dir()


def test_a_socket_target_is_refused_and_kept(reports: Path, tmp_path: Path) -> None:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(InputError, match="is a socket, which graphcert never replaces"):
            atomic_write_text(path, "x")
        assert "is a socket" in one_line(run("gate", "reports", "--junit", str(path)))
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
