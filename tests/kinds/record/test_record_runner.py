"""The in-place recorder (graphcert.record(), run/record.py) without a GPU: how the body
ended becomes the record's, Ctrl-C is deferred out of CUPTI callbacks, a CUPTI failure is one
line, and a certificate is whole or absent. CUPTI is replaced by a fake recorder that sees
nothing. `graphcert record -- COMMAND` (a process tree): test_record_command.py."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest

import graphcert.cupti.record as cupti_record
import graphcert.run.record as run_record
from graphcert.cert.results.verdict import Status
from graphcert.errors import InputError
from graphcert.kinds.record.result import Ended
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


def test_a_program_that_never_touches_cuda_is_incomplete_with_a_certificate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from _certfactory import environment as synthetic_environment

    import graphcert.run.environment as env

    monkeypatch.setattr(env, "environment", lambda device, git: synthetic_environment())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app.py").write_text("# SYNTHETIC program\n", encoding="utf-8")
    out = tmp_path / "reports"
    out.mkdir()
    done = run_record.RecordSession(("app.py",), out_dir=out,
                                    recorder=FakeRecorder())
    with done:
        print("hello")
    assert done.result is not None and done.result.verdict.status is Status.INCOMPLETE
    assert "no kernel ran" in done.result.verdict.reasons[0]
    assert done.certificate is not None and done.certificate.parent == out
    doc = json.loads(done.certificate.read_text())
    assert doc["kind"] == "record" and doc["workload"]["name"] == "app"
    assert [p.name for p in out.iterdir()] == [done.certificate.name]  # no snapshots: none


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


def test_a_signal_landing_in_a_cupti_callback_is_raised_once_the_callback_returned() -> None:
    """cupti-python swallows an exception raised in a callback: the runner's handlers send
    the signal again until it lands in the program's own code (here the callback is
    simulated by the flag graphcert's callbacks set while they run)."""
    from graphcert.cupti import callbacks

    reached: list[str] = []
    sig = signal.SIGINT
    with pytest.raises(KeyboardInterrupt):
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


def test_a_body_whose_own_profiler_fails_in_cupti_is_one_line_without_a_certificate(
        tmp_path: Path) -> None:
    from graphcert.cupti.library import CuptiUnavailable

    out = tmp_path / "reports"
    out.mkdir()
    session = run_record.RecordSession(("app.py",), out_dir=out,
                                       recorder=FakeRecorder())
    with pytest.raises(CuptiUnavailable, match="the program failed in CUPTI"):
        with session:
            raise RuntimeError("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED in kineto")
    assert not list(out.glob("record-*.json"))


def test_the_context_manager_defers_ctrl_c_out_of_callbacks_and_restores_the_handler() -> None:
    """graphcert.record()'s session: Ctrl-C (Python's own handler) is deferred out of a
    CUPTI callback like the command's; the program's handler comes back on exit."""
    from graphcert.cupti import callbacks

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    session = run_record.RecordSession(("block",), recorder=FakeRecorder())
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
