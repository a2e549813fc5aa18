"""Issue 28 item 4: every input is read by one bounded reader (graphcert.fileread). A FIFO
whose writer never writes, or writes forever, and /dev/zero are one line and exit 2 for each
input a user can name; a FIFO or device found inside a gate folder is named, never opened."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _certfactory import certificate
from _oneline import one_line
from click.testing import CliRunner, Result

import graphcert
from graphcert import fileread
from graphcert.cert.document import write_certificate
from graphcert.cli import cli
from graphcert.fileread import FileProblem, read_bounded

pytestmark = pytest.mark.usefixtures("synthetic_cli")
DEADLINE_S = 20  # a test that has not answered by then hangs (the bug it guards against)
HAVE_ZERO = os.path.exists("/dev/zero")


def within_deadline(fn: Callable[[], object]) -> object:
    """fn() in a thread: fail (instead of hanging the suite) when it does not return."""
    box: list[object] = []
    raised: list[BaseException] = []

    def call() -> None:
        try:
            box.append(fn())
        except BaseException as exc:  # handed to the test's thread
            raised.append(exc)

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    assert not thread.is_alive(), f"no answer within {DEADLINE_S} s: the read hangs"
    if raised:
        raise raised[0]
    return box[0]


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    result = within_deadline(lambda: CliRunner().invoke(cli, list(args), env=env))
    assert isinstance(result, Result)
    return result



@pytest.fixture(autouse=True)
def short_stream_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streams give up sooner here than for a user (60 s, 64 MiB): the tests stay fast."""
    monkeypatch.setattr(fileread, "STREAM_TIMEOUT_S", 0.1)
    monkeypatch.setattr(fileread, "STREAM_MAX_BYTES", 4 * fileread.MiB)


class Writer:
    """A FIFO's other end: `never` opens it, `silent` opens it and writes nothing, `forever`
    writes zeros until the reader goes away."""

    def __init__(self, path: Path, mode: str):
        self.path, self.mode = path, mode
        self.stop = threading.Event()
        if mode != "never":
            threading.Thread(target=self._write, daemon=True).start()

    def _write(self) -> None:
        fd = os.open(self.path, os.O_WRONLY)  # waits for the reader
        try:
            while self.mode == "forever" and not self.stop.is_set():
                os.write(fd, bytes(1 << 16))
            self.stop.wait(30)
        except BrokenPipeError:  # the reader gave up, as it should
            pass
        finally:
            os.close(fd)


@pytest.fixture(params=["never", "silent", "forever"])
def fifo(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "in.json"
    os.mkfifo(path)
    writer = Writer(path, request.param)
    yield path
    writer.stop.set()
    try:  # a writer still waiting for a reader is released
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError:
        pass


@pytest.fixture()
def reports(tmp_path: Path) -> Path:
    write_certificate(tmp_path / "reports" / "t.json", certificate("topology"))
    return tmp_path / "reports"


def _zero(tmp_path: Path) -> Path:
    """/dev/zero under a name ending in .json (inventory tells a file by its suffix)."""
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    return link


# Every input a user names; {f} is the FIFO or /dev/zero.
NAMED_INPUTS = {
    "inventory": ["inventory", "{f}"],
    "show": ["show", "{f}"],
    "diff a": ["diff", "{f}", "reports/t.json"],
    "diff b": ["diff", "reports/t.json", "{f}"],
    "gate file": ["gate", "{f}"],
    "report": ["report", "{f}"],
    "--policy": ["gate", "reports", "--policy", "{f}"],
    "--signing-key-file": ["gate", "reports", "--signing-key-file", "{f}"],
}


@pytest.mark.parametrize("name", sorted(NAMED_INPUTS))
def test_named_fifo_is_one_line(reports: Path, fifo: Path, name: str) -> None:
    args = [a.format(f=fifo) for a in NAMED_INPUTS[name]]
    assert "in.json" in one_line(run(*args))
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.skipif(not HAVE_ZERO, reason="no /dev/zero here")
@pytest.mark.parametrize("name", sorted(NAMED_INPUTS))
def test_named_dev_zero_is_one_line(reports: Path, tmp_path: Path, name: str) -> None:
    zero = _zero(tmp_path)
    args = [a.format(f=zero) for a in NAMED_INPUTS[name]]
    line = one_line(run(*args))
    assert "zero.json" in line and ("more than" in line or "character device" in line), line


def test_key_file_from_the_environment_is_bounded(reports: Path, fifo: Path) -> None:
    line = one_line(run("gate", "reports", env={"GRAPHCERT_SIGNING_KEY_FILE": str(fifo)}))
    assert line.startswith(f"graphcert: error: signing key file {fifo}: is a FIFO")


def test_fifo_inside_a_gate_folder_is_named_not_opened(reports: Path) -> None:
    os.mkfifo(reports / "pipe.json")  # no writer: opening it for reading would block
    line = one_line(run("gate", "reports"))
    assert line == ("graphcert: error: reports/pipe.json: is a FIFO, not a regular file; the "
                    "gate reads only regular files in a folder (remove it)")


@pytest.mark.skipif(not HAVE_ZERO, reason="no /dev/zero here")
@pytest.mark.parametrize("folder_option", [None, "--baseline"])
def test_symlink_to_dev_zero_in_a_folder_says_what_it_is(reports: Path, tmp_path: Path,
                                                          folder_option: str | None) -> None:
    folder = tmp_path / "base"
    write_certificate(folder / "t.json", certificate("topology"))
    (folder / "z.json").symlink_to("/dev/zero")
    args = ["gate", "reports", "--baseline", "base"] if folder_option else ["gate", "base"]
    line = one_line(run(*args))
    assert "base/z.json: is a character device (through a symlink), not a regular file" in line


def test_fifo_in_a_baseline_folder_is_named(reports: Path, tmp_path: Path) -> None:
    write_certificate(tmp_path / "base" / "t.json", certificate("topology"))
    os.mkfifo(tmp_path / "base" / "p.json")
    line = one_line(run("gate", "reports", "--baseline", "base"))
    assert "base/p.json: is a FIFO, not a regular file" in line


def test_load_of_a_fifo_is_an_input_error(fifo: Path) -> None:
    with pytest.raises(FileProblem, match="in.json: is a FIFO that"):
        within_deadline(lambda: graphcert.load(fifo))


@pytest.mark.skipif(not HAVE_ZERO, reason="no /dev/zero here")
def test_load_of_dev_zero_stops_at_the_stream_cap() -> None:
    with pytest.raises(FileProblem, match="/dev/zero: is a character device that sent more "
                                          "than 4 MiB"):
        within_deadline(lambda: graphcert.load("/dev/zero"))


def _piped(path: Path, data: bytes) -> Path:
    """A FIFO at `path` that a thread fills with `data` once."""
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as handle:
            handle.write(data)

    threading.Thread(target=write, daemon=True).start()
    return path


def test_a_named_fifo_with_a_whole_certificate_is_read(reports: Path, tmp_path: Path) -> None:
    path = _piped(tmp_path / "piped.json", (reports / "t.json").read_bytes())
    result = run("show", str(path), "--json")
    assert result.exit_code == 0, result.output


def test_diff_of_two_piped_snapshots_reads_each_once(tmp_path: Path) -> None:
    """Each side is read once: a FIFO has nothing left for a second read."""
    snapshots = Path(__file__).resolve().parents[1] / "fixtures" / "snapshots"
    a = _piped(tmp_path / "a.json", (snapshots / "chain-c256.snapshot.json").read_bytes())
    b = _piped(tmp_path / "b.json", (snapshots / "chain-c512.snapshot.json").read_bytes())
    result = run("diff", str(a), str(b), "--json")
    assert result.exit_code == 0, result.output
    assert '"topology_equal": true' in result.stdout


def test_a_regular_file_over_the_cap_is_refused_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:  # sparse: nothing is written, the size says 600 MiB
        handle.truncate(600 * fileread.MiB)
    line = one_line(run("show", str(big)))
    assert line.endswith(f"big.json: is {600 * fileread.MiB:,} bytes; graphcert reads at most "
                         f"512 MiB here")


def test_a_key_file_over_its_cap_is_refused(reports: Path, tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_bytes(b"k" * (fileread.MAX_KEY_BYTES + 1))
    line = one_line(run("gate", "reports", "--signing-key-file", str(key)))
    assert "graphcert reads at most 64 KiB here" in line


def test_walked_fifo_is_refused_by_the_reader_too(tmp_path: Path) -> None:
    """Checked again after opening (a file swapped for a FIFO after the walk)."""
    path = tmp_path / "p.json"
    os.mkfifo(path)
    with pytest.raises(FileProblem, match="never one found in a folder"):
        read_bounded(path, 100, streams=False)
