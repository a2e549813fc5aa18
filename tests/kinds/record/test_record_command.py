"""`graphcert record -- COMMAND` without a GPU: real processes (SYNTHETIC commands that write
SYNTHETIC streams, tests/_fakeinjection.py) run under the runner with the collector, the
reader and the certificate's result faked; exit codes, signals, outlived and killed
processes, bad input as one line, and the certificate whole or absent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _fakeinjection import PRELUDE, NoCompiler, install, script
from click.testing import CliRunner, Result

from graphcert.cli import cli
from graphcert.kinds.record.result import Ended
from graphcert.options import Options
from graphcert.recording.processes import ProcessEnded
from graphcert.run import record_run
from graphcert.run.record_command import resolve_command, run_command


def _record(*args: str) -> Result:
    return CliRunner().invoke(cli, ["record", *args])


def _processes(made: Any) -> dict[int, Any]:
    return {p.info.pid: p for p in made.calls[-1]["processes"]}


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    monkeypatch.chdir(tmp_path)
    return install(monkeypatch, tmp_path)


def test_a_command_that_exits_3_passes_3_on_with_a_certificate(fakes: Any, tmp_path: Path
                                                               ) -> None:
    app = script(tmp_path, "stream()\nsys.exit(3)\n")
    result = _record("--out", "reports", "--", "python", str(app), "--flag")
    assert result.exit_code == 3, result.output
    (cert,) = (tmp_path / "reports").glob("record-*.json")
    doc = json.loads(cert.read_text())
    assert doc["kind"] == "record" and doc["workload"]["name"] == "synthetic_app --flag"
    assert doc["results"]["program"] == ["python", str(app), "--flag"]
    (process,) = _processes(fakes).values()
    assert process.info.exit_code == 3 and process.info.ended is ProcessEnded.EXIT
    assert process.info.argv[1:] == (str(app), "--flag")  # a real child process: its argv
    assert not list(tmp_path.glob("graphcert-run-*"))  # nothing left behind here


def test_source_names_the_file_the_gate_digests_for_a_native_command(fakes: Any,
                                                                     tmp_path: Path) -> None:
    """A native binary's certificate can stand on its source: the gate digests that file."""
    source = tmp_path / "server.cu"
    source.write_text("// SYNTHETIC source of a native server\n", encoding="utf-8")
    result = _record("--out", "reports", "--source", str(source), "--", "/bin/sh", "-c",
                     "exit 0")
    assert result.exit_code == 0, result.output
    (cert,) = (tmp_path / "reports").glob("record-*.json")
    workload = json.loads(cert.read_text())["workload"]
    assert workload["ref"].startswith(f"{source}:__main__") and workload["name"].startswith(
        "server ")
    source.write_text("// changed\n", encoding="utf-8")
    shown = CliRunner().invoke(cli, ["show", str(cert)])
    assert "stale" in shown.output


def test_a_py_file_given_first_runs_under_this_python(fakes: Any, tmp_path: Path) -> None:
    app = script(tmp_path, "stream()\n")
    command = resolve_command([str(app), "x"])
    assert command.argv == (sys.executable, str(app), "x") and command.given == (str(app), "x")
    assert resolve_command(["python3", str(app)]).argv[0] == "python3"  # stays: a real child
    assert _record("--no-certificate", "--", str(app)).exit_code == 0


@pytest.mark.parametrize(("argv", "code", "words"), [
    (["no-such-command-synthetic"], 127, "no-such-command-synthetic: command not found"),
    (["./gone/server"], 127, "./gone/server: no such file"),
    (["gone.py"], 127, "gone.py: no such file"),
])
def test_a_command_that_is_not_there_is_one_line_and_127(fakes: Any, argv: list[str],
                                                         code: int, words: str) -> None:
    result = _record("--", *argv)
    assert result.exit_code == code
    assert words in result.output and len(result.output.strip().splitlines()) == 1
    assert "Traceback" not in result.output and not fakes.calls


def test_a_file_that_is_not_executable_is_126(fakes: Any, tmp_path: Path) -> None:
    plain = tmp_path / "run.sh"
    plain.write_text("echo hi\n")
    result = _record("--", str(plain))
    assert result.exit_code == 126 and "not an executable file" in result.output


def test_a_native_binary_just_runs_and_is_certified(fakes: Any, tmp_path: Path) -> None:
    """An ELF (no Python SyntaxError traceback as the in-process runner printed)."""
    result = _record("--out", "reports", "--", "/bin/sh", "-c", "exit 4")
    assert result.exit_code == 4 and "SyntaxError" not in result.output
    assert len(list((tmp_path / "reports").glob("record-*.json"))) == 1
    # it never initialised CUDA (no stream), yet the command's own process is listed, with
    # how it ended, and launched nothing
    (process,) = _processes(fakes).values()
    assert process.info.argv == ("/bin/sh", "-c", "exit 4") and process.info.exit_code == 4
    assert process.launched_nothing and process.info.ended is ProcessEnded.EXIT


def test_another_injection_tool_is_refused_before_anything_runs(
        fakes: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran = tmp_path / "ran"
    monkeypatch.setenv("CUDA_INJECTION64_PATH",
                       "/opt/nvidia/nsight-systems/2025.1/target/libToolsInjection64.so")
    result = _record("--", "/bin/sh", "-c", f"touch {ran}")
    assert result.exit_code == 2 and "Nsight Systems" in result.output
    assert "unset CUDA_INJECTION64_PATH" in result.output and not ran.exists()


def test_no_compiler_for_the_collector_is_exit_2_and_nothing_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, tmp_path, build_error=NoCompiler(
        "no C compiler to build graphcert's collector", hint="install gcc (apt install gcc)"))
    ran = tmp_path / "ran"
    result = _record("--", "/bin/sh", "-c", f"touch {ran}")
    assert result.exit_code == 2 and "install gcc" in result.output and not ran.exists()


def test_an_output_folder_that_cannot_be_written_is_exit_2_and_nothing_runs(
        fakes: Any, tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file, not a folder")
    ran = tmp_path / "ran"
    result = _record("--out", "taken/sub", "--", "/bin/sh", "-c", f"touch {ran}")
    assert result.exit_code == 2 and "not writable" in result.output and not ran.exists()


CHILD = PRELUDE + "stream()\nopen(sys.argv[1], 'w').close()\ntime.sleep(60)\n"


def _with_child(then: str, refused: bool = False) -> str:
    """A SYNTHETIC command that starts a child writing its own stream, waits until it is
    ready, then runs `then`."""
    return (f"stream({refused})\nimport subprocess\nready = os.path.abspath('child-ready')\n"
            f"child = subprocess.Popen([sys.executable, '-c', {CHILD!r}, ready])\n"
            "while not os.path.exists(ready): time.sleep(0.01)\n" + then)


def test_a_child_killed_mid_run_is_marked_and_the_others_kept(fakes: Any, tmp_path: Path
                                                              ) -> None:
    app = script(tmp_path, _with_child("os.kill(child.pid, 9); child.wait()\n"))
    result = _record("--out", "reports", "--", str(app))
    assert result.exit_code == 0, result.output
    ended = {p.info.ended for p in _processes(fakes).values()}
    assert ended == {ProcessEnded.EXIT, ProcessEnded.KILLED}
    assert "was killed (no end in its stream" in result.output
    assert len(list((tmp_path / "reports").glob("record-*.json"))) == 1


def test_a_process_whose_cupti_was_refused_is_named_in_one_line(fakes: Any, tmp_path: Path
                                                                ) -> None:
    app = script(tmp_path, "stream(refused=True)\n")
    result = _record("--out", "reports", "--", str(app))
    assert result.exit_code == 0
    (line,) = [ln for ln in result.output.splitlines() if "CUPTI refused" in ln]
    assert line.startswith("graphcert record: pid ") and "cuptiSubscribe" in line
    assert len(list((tmp_path / "reports").glob("record-*.json"))) == 1


def test_a_child_outliving_the_command_is_waited_for_then_marked(fakes: Any, tmp_path: Path
                                                                 ) -> None:
    app = script(tmp_path, _with_child("sys.exit(0)\n"))
    result = _record("--no-certificate", "--grace", "0.3", "--", str(app))
    out = [p for p in _processes(fakes).values() if p.info.ended is ProcessEnded.OUTLIVED]
    try:
        assert result.exit_code == 0, result.output
        assert len(out) == 1
        assert (f"graphcert record: 1 process outlived the command (pid {out[0].info.pid}: "
                in result.output)
        assert "its record ends at its last flush" in result.output
    finally:
        for p in out:
            os.kill(p.info.pid, signal.SIGKILL)


def test_a_child_ending_within_the_grace_is_not_outlived(fakes: Any, tmp_path: Path) -> None:
    app = script(tmp_path, _with_child("sys.exit(0)\n").replace("time.sleep(60)",
                                                                 "time.sleep(0.3)"))
    result = _record("--no-certificate", "--grace", "10", "--", str(app))
    assert result.exit_code == 0 and "outlived" not in result.output
    assert {p.info.ended for p in _processes(fakes).values()} == {ProcessEnded.EXIT}


@pytest.mark.parametrize(("body", "code", "ended"), [
    ("os.kill(os.getpid(), signal.SIGTERM)\n", 143, Ended.TERMINATED),
    ("os.kill(os.getpid(), signal.SIGKILL)\n", 137, Ended.KILLED),
    ("os.kill(os.getpid(), signal.SIGSEGV)\n", 139, Ended.KILLED),
])
def test_a_command_ended_by_a_signal_is_128_plus_its_number(
        fakes: Any, tmp_path: Path, body: str, code: int, ended: Ended) -> None:
    app = script(tmp_path, "import signal\nstream()\n" + body)
    result = _record("--out", "reports", "--", str(app))
    assert result.exit_code == code, result.output
    assert fakes.calls[-1]["finished"].ended is ended
    assert len(list((tmp_path / "reports").glob("record-*.json"))) == 1


def _signal_when(path: Path, signum: int) -> threading.Thread:
    def send() -> None:
        deadline = time.monotonic() + 20
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), signum)
    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def test_ctrl_c_goes_to_the_command_and_graphcert_exits_130(fakes: Any, tmp_path: Path
                                                             ) -> None:
    ready = tmp_path / "ready"
    app = script(tmp_path, f"stream()\nopen({str(ready)!r}, 'w').close()\ntime.sleep(60)\n")
    _signal_when(ready, signal.SIGINT)
    result = _record("--out", "reports", "--", str(app))
    assert result.exit_code == 130, result.output
    assert fakes.calls[-1]["finished"].ended is Ended.INTERRUPTED
    # Python's own KeyboardInterrupt unwound the command: its exit handlers ran
    (process,) = _processes(fakes).values()
    assert process.info.ended is ProcessEnded.EXIT
    assert len(list((tmp_path / "reports").glob("record-*.json"))) == 1


def test_a_second_ctrl_c_is_forwarded_again(fakes: Any, tmp_path: Path) -> None:
    """The command ignores the first SIGINT (draining, say) and ends on the second."""
    first, ready = tmp_path / "first", tmp_path / "ready"
    app = script(tmp_path, "import signal\nseen = []\n"
                 "def on_int(s, f):\n    seen.append(s)\n"
                 f"    open({str(first)!r}, 'w').close()\n"
                 "    if len(seen) == 2: sys.exit(130)\n"
                 "signal.signal(signal.SIGINT, on_int)\n"
                 f"open({str(ready)!r}, 'w').close()\n"
                 "while True: time.sleep(0.01)\n")
    from graphcert.run.record_command import Command

    command = Command((str(app),), (sys.executable, str(app)), sys.executable)
    env = {**os.environ, "GRAPHCERT_RUN_DIR": str(tmp_path)}
    _signal_when(ready, signal.SIGINT)
    _signal_when(first, signal.SIGINT)
    finished = run_command(command, env)
    assert finished.forwarded == (signal.SIGINT, signal.SIGINT)
    assert finished.exit_code == 130 and finished.ended is Ended.INTERRUPTED


def test_sigterm_to_graphcert_goes_to_the_command(fakes: Any, tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    app = script(tmp_path, f"stream()\nopen({str(ready)!r}, 'w').close()\ntime.sleep(60)\n")
    _signal_when(ready, signal.SIGTERM)
    result = _record("--no-certificate", "--", str(app))
    assert result.exit_code == 143 and fakes.calls[-1]["finished"].ended is Ended.TERMINATED


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGQUIT])
def test_sighup_and_sigquit_to_graphcert_go_to_the_command(fakes: Any, tmp_path: Path,
                                                          signum: int) -> None:
    """A closed terminal (SIGHUP) or Ctrl-\\ (SIGQUIT) reaches graphcert only (the command
    runs in its own session): passed on, the command ends by it, not left running."""
    ready = tmp_path / "ready"
    app = script(tmp_path, f"stream()\nopen({str(ready)!r}, 'w').close()\ntime.sleep(60)\n")
    _signal_when(ready, signum)
    result = _record("--no-certificate", "--", str(app))
    finished = fakes.calls[-1]["finished"]
    assert result.exit_code == 128 + signum, result.output
    assert finished.forwarded == (signum,) and finished.signal_name == signal.Signals(signum).name


def test_ctrl_c_while_waiting_for_stragglers_goes_to_them(fakes: Any, tmp_path: Path
                                                          ) -> None:
    """The command's own process is gone; its child (same process group) still runs."""
    orphan = (PRELUDE + "stream()\nparent = os.getppid()\nopen(sys.argv[1], 'w').close()\n"
              "while os.getppid() == parent: time.sleep(0.01)\n"
              "open('orphaned', 'w').close()\ntime.sleep(60)\n")
    app = script(tmp_path, _with_child("sys.exit(0)\n").replace(repr(CHILD), repr(orphan)))
    _signal_when(tmp_path / "orphaned", signal.SIGINT)  # only once the command has ended
    started = time.monotonic()
    result = _record("--no-certificate", "--grace", "30", "--", str(app))
    assert result.exit_code == 0 and "outlived" not in result.output
    assert time.monotonic() - started < 20  # the child ended on the Ctrl-C it was given
    assert fakes.calls[-1]["finished"].forwarded == (signal.SIGINT,)


def test_kept_streams_stay_with_every_process_stream(fakes: Any, tmp_path: Path) -> None:
    app = script(tmp_path, _with_child("os.kill(child.pid, 9); child.wait()\n"))
    result = _record("--no-certificate", "--keep-streams", "streams", "--", str(app))
    assert result.exit_code == 0
    (run,) = (tmp_path / "streams").iterdir()
    assert len(list(run.glob("proc-*.jsonl"))) == 2 and f"streams: {run}" in result.output


def test_the_api_returns_the_run(fakes: Any, tmp_path: Path) -> None:
    app = script(tmp_path, "stream()\n")
    done = record_run.record_command([str(app)], out_dir=None, options=Options())
    assert done.certificate is None and done.streams is None and done.notes == ()
    assert done.result.exit_code == 0 and fakes.calls[-1]["cupti_version"] == 13000


WRAPPER = """\
import sys
sys.path[:0] = [{root!r}, {tests!r}]  # this checkout's graphcert, and tests/ for the fakes
from graphcert import _interrupt
_interrupt.install()  # as `python -m graphcert` does first
from pathlib import Path
import pytest
import _fakeinjection
_fakeinjection.install(pytest.MonkeyPatch(), Path({tmp!r}))
from graphcert.cli import main
main()
"""


def test_ctrl_c_at_the_command_line_reaches_the_command_in_its_own_session(
        tmp_path: Path) -> None:
    """graphcert's own Ctrl-C handler in place, as from the terminal: SIGINT to graphcert's
    process only (the command, in a session of its own, is not in the terminal's group)."""
    got, ready = tmp_path / "got-int", tmp_path / "ready"
    app = script(tmp_path, "import signal\nstream()\n"
                 "def on_int(s, f):\n"
                 f"    open({str(got)!r}, 'w').close()\n    sys.exit(130)\n"
                 "signal.signal(signal.SIGINT, on_int)\n"
                 f"open({str(ready)!r}, 'w').close()\ntime.sleep(60)\n")
    wrapper = tmp_path / "graphcert_synthetic_cli.py"
    tests = Path(__file__).parents[2]
    wrapper.write_text(WRAPPER.format(root=str(tests.parent), tests=str(tests), tmp=str(tmp_path)))
    env = {k: v for k, v in os.environ.items() if k != "CUDA_INJECTION64_PATH"}
    cli_proc = subprocess.Popen([sys.executable, str(wrapper), "record", "--out",
                                 str(tmp_path / "reports"), "--", str(app)], cwd=tmp_path,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline and cli_proc.poll() is None:
            time.sleep(0.01)
        cli_proc.send_signal(signal.SIGINT)
        _, err = cli_proc.communicate(timeout=30)
    finally:
        if cli_proc.poll() is None:
            cli_proc.kill()
    assert cli_proc.returncode == 130, err
    assert got.exists() and "Traceback" not in err
    assert len(list((tmp_path / "reports").glob("record-*.json"))) == 1
