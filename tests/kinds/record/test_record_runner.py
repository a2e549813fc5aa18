"""The in-place recorder (graphcert.record(), run/record.py) without a GPU: programs run
in-process through runpy with their own argv, exit codes passed on, bad programs one line,
and a certificate whole or absent. CUPTI is replaced by a fake recorder that sees nothing.
`graphcert record -- COMMAND` (a process tree): test_record_command.py."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import graphcert.cupti.record as cupti_record
import graphcert.run.record as run_record
from graphcert.cert.results.verdict import Status
from graphcert.errors import InputError
from graphcert.kinds.record.result import Ended
from graphcert.options import Options
from graphcert.recording import Recording


class FakeRecorder:
    """Stands in for graphcert.cupti.record.Recorder: records nothing, counts its calls."""

    def __init__(self, read: Any = None) -> None:
        self.entered = self.closed = 0
        self.errors: tuple[str, ...] = ()

    def __enter__(self) -> FakeRecorder:
        self.entered += 1
        return self

    def close(self) -> None:
        self.closed += 1

    def recording(self) -> Recording:
        return Recording()


def _script(tmp_path: Path, body: str, name: str = "app.py") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def _run(argv: list[str], out: Path | None = None) -> run_record.RecordedRun:
    return run_record.record_program(argv, out_dir=out, options=Options(),
                                     recorder=FakeRecorder())


def test_a_script_that_does_not_exist_is_one_line_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no-such.py: no such script"):
        _run(["python", str(tmp_path / "no-such.py")])


def test_the_program_gets_its_own_argv_and_sys_argv_is_restored(tmp_path: Path) -> None:
    seen = tmp_path / "argv.json"
    app = _script(tmp_path, f"import json, sys\njson.dump(sys.argv, open({str(seen)!r}, 'w'))\n")
    before = sys.argv[:]
    done = _run(["python3", str(app), "--fallback", "x"])
    assert json.loads(seen.read_text()) == [str(app), "--fallback", "x"]
    assert sys.argv == before
    assert done.result.exit_code == 0 and done.result.ended is Ended.EXIT


def test_sys_exit_3_is_passed_on_and_the_verdict_is_incomplete(tmp_path: Path) -> None:
    done = _run([str(_script(tmp_path, "import sys\nsys.exit(3)\n"))])
    assert done.result.exit_code == 3 and done.result.ended is Ended.EXIT
    assert done.result.verdict.status is Status.INCOMPLETE
    assert "exit code 3" in done.result.verdict.reasons[0]


def test_a_script_that_raises_at_import_ends_by_exception_with_code_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = _run([str(_script(tmp_path, "import no_such_module_xyz\n"))])
    assert done.result.exit_code == 1 and done.result.ended is Ended.EXCEPTION
    assert done.result.detail is not None and "no_such_module_xyz" in done.result.detail
    assert "Traceback" in capsys.readouterr().err  # printed as Python would


@pytest.mark.parametrize(("body", "code", "ended"), [
    ("raise KeyboardInterrupt\n", 130, Ended.INTERRUPTED),
    ("import os, signal, time\nos.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(5)\n", 143,
     Ended.TERMINATED)])
def test_ctrl_c_and_sigterm_end_the_recording_cleanly(tmp_path: Path, body: str, code: int,
                                                      ended: Ended) -> None:
    done = _run([str(_script(tmp_path, body))])
    assert (done.result.exit_code, done.result.ended) == (code, ended)


def test_a_program_that_never_touches_cuda_is_incomplete_with_a_certificate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from _certfactory import environment as synthetic_environment

    import graphcert.run.environment as env

    monkeypatch.setattr(env, "environment", lambda device, git: synthetic_environment())
    out = tmp_path / "reports"
    done = _run([str(_script(tmp_path, "print('hello')\n"))], out=out)
    assert done.result.verdict.status is Status.INCOMPLETE
    assert "no kernel ran" in done.result.verdict.reasons[0]
    assert done.certificate is not None and done.certificate.parent == out
    doc = json.loads(done.certificate.read_text())
    assert doc["kind"] == "record" and doc["workload"]["name"] == "app"
    assert [p.name for p in out.iterdir()] == [done.certificate.name]  # no snapshots: none


def test_module_programs_run_with_dash_m(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    _script(tmp_path, "import sys\nsys.exit(len(sys.argv))\n", name="recmod_synthetic.py")
    monkeypatch.chdir(tmp_path)
    done = _run(["python", "-m", "recmod_synthetic", "a", "b"])
    assert done.result.exit_code == 3


def test_graphs_made_with_no_activity_record_mean_cupti_was_taken_over() -> None:
    """Synthetic: a graph instantiated (heard through callbacks) and no kernel or graph
    launch record at all (torch.profiler took the activity records)."""
    from graphcert.cupti.library import CuptiUnavailable
    from graphcert.recording import Instantiated, KernelRun, Launched, Made

    made = (Instantiated(0, (2,), Made.CAPTURE, 10, 5),)
    with pytest.raises(CuptiUnavailable, match="took CUPTI over"):
        run_record.check_not_taken(Recording(instantiated=made))
    run_record.check_not_taken(Recording(instantiated=made,  # a launch record: no error
                                         launched=(Launched(0, 1, 2, 100, 200),)))
    run_record.check_not_taken(Recording(instantiated=made,  # an eager kernel: no error
                                         kernels=(KernelRun("k", 1, 2, 0),)))
    run_record.check_not_taken(Recording())  # no graph made: nothing to say


def test_graphcert_record_as_a_context_manager_gives_the_result(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import graphcert

    monkeypatch.setattr(cupti_record, "Recorder", FakeRecorder)
    monkeypatch.setattr(run_record, "graph_reader", lambda device: None)
    with graphcert.record() as rec:
        pass
    assert rec.result is not None and rec.result.ended is Ended.EXIT
    assert rec.certificate is None  # no folder given
    with pytest.raises(ValueError), graphcert.record() as failed:
        raise ValueError("the body's own error propagates")
    assert failed.result.ended is Ended.EXCEPTION and "ValueError" in failed.result.detail
    with pytest.raises(InputError):
        graphcert.record(device=-1)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_landing_in_a_cupti_callback_is_raised_once_the_callback_returned(
        sig: int) -> None:
    """cupti-python swallows an exception raised in a callback: the runner's handlers send
    the signal again until it lands in the program's own code (here the callback is
    simulated by the flag graphcert's callbacks set while they run)."""
    from graphcert.cupti import callbacks

    reached: list[str] = []
    raises = KeyboardInterrupt if sig == signal.SIGINT else run_record.Terminated
    with pytest.raises(raises):
        with run_record._signals_raise():
            callbacks._STATE.busy = True
            try:
                signal.raise_signal(sig)
                for _ in range(1000):  # the handler runs here, in the "callback": deferred
                    pass
                reached.append("after the signal, in the callback")
            finally:
                callbacks._STATE.busy = False
            time.sleep(5)  # sent again within REDELIVER_S: raised here
            reached.append("slept on")
    assert reached == ["after the signal, in the callback"]
    assert signal.getsignal(sig) is not None and not callbacks.in_callback()


def test_a_program_whose_own_profiler_fails_in_cupti_is_one_line_without_a_certificate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from graphcert.cupti.library import CuptiUnavailable

    out = tmp_path / "reports"
    body = "raise RuntimeError('CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED in kineto')\n"
    with pytest.raises(CuptiUnavailable, match="the program failed in CUPTI"):
        _run([str(_script(tmp_path, body))], out=out)
    assert "Traceback" not in capsys.readouterr().err  # graphcert's one line says it
    assert not list(out.glob("record-*.json"))
    done = _run([str(_script(tmp_path, "raise RuntimeError('boom')\n", "other.py"))])
    assert done.result.exit_code == 1 and "Traceback" in capsys.readouterr().err


def test_the_context_manager_defers_ctrl_c_out_of_callbacks_and_restores_the_handler() -> None:
    """graphcert.record()'s session: Ctrl-C (Python's own handler) is deferred out of a
    CUPTI callback like the command's; the program's handler comes back on exit."""
    from graphcert.cupti import callbacks

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    session = run_record.RecordSession(("block",), auto_finish=True, recorder=FakeRecorder())
    reached: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        with session:
            assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
            callbacks._STATE.busy = True
            try:
                signal.raise_signal(signal.SIGINT)
                for _ in range(1000):
                    pass
                reached.append("in the callback")
            finally:
                callbacks._STATE.busy = False
            time.sleep(5)
    assert reached == ["in the callback"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert session.result is not None and session.result.ended is Ended.INTERRUPTED


def test_runs_with_other_arguments_are_other_workloads() -> None:
    """The gate keys certificates by workload reference: the program's arguments are an
    option of it, so a --fallback run and a --recapture run may share a folder."""
    from graphcert.run.record import program_identity
    from graphcert.workloads.registry import parse_ref

    plain, _ = program_identity(["app.py"])
    fallback, name = program_identity(["app.py", "--fallback"])
    odd, _ = program_identity(["app.py", "--set", "a=b,c"])
    assert plain == "app.py:__main__" and name == "app --fallback"
    assert fallback == "app.py:__main__[args=--fallback]"
    assert dict(parse_ref(fallback).options) == {"args": "--fallback"}
    assert odd.startswith("app.py:__main__[args=sha256-") and len(set((plain, fallback, odd))) == 3
    assert program_identity(["-m", "pkg.app", "-v"])[0] == "pkg.app:__main__[args=-v]"
