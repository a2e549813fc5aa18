"""The parts of `graphcert record -- COMMAND` that need no process tree: the command's
environment, how a return code reads, a stream's process found alive by pid and start time,
the GPU the certificate names, and one snapshots folder for every process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphcert.errors import InputError
from graphcert.kinds.record.result import Ended
from graphcert.model import load_snapshot
from graphcert.recording import Instantiated, Made, Recording, analyse
from graphcert.recording.processes import GpuSeen, ProcessEnded, ProcessInfo, ProcessRecorded
from graphcert.run import record as run_record
from graphcert.run import record_run
from graphcert.run.record_command import (
    collector_env,
    ended_by,
    start_time,
    streams_alive,
    wait_for_streams,
)

ROOT = Path(__file__).resolve().parents[3]
SNAPSHOTS = ROOT / "tests/fixtures/record/record-serve_torch_--fallback-NVIDIA_H200.snapshots"
PATHS = {"collector": Path("/c/libgraphcert_collector.so"), "exit_hook": Path("/c/exit.so"),
         "libcupti": Path("/w/libcupti.so.13"), "run_dir": Path("/tmp/run")}


def test_the_environment_names_the_collector_the_folder_the_hook_and_nvtx() -> None:
    env, nvtx = collector_env({"LD_PRELOAD": "/u/libmine.so", "HOME": "/h"}, **PATHS)
    assert env["CUDA_INJECTION64_PATH"] == "/c/libgraphcert_collector.so"
    assert env["GRAPHCERT_RUN_DIR"] == "/tmp/run" and env["HOME"] == "/h"
    assert env["LD_PRELOAD"] == "/c/exit.so:/u/libmine.so"  # the user's preload kept, after
    assert env["NVTX_INJECTION64_PATH"] == "/w/libcupti.so.13" and nvtx is None
    assert collector_env({}, **PATHS)[0]["LD_PRELOAD"] == "/c/exit.so"


def test_nvtx_routed_elsewhere_stays_and_says_why() -> None:
    env, nvtx = collector_env({"NVTX_INJECTION64_PATH": "/opt/tool/libnvtx_tool.so"}, **PATHS)
    assert env["NVTX_INJECTION64_PATH"] == "/opt/tool/libnvtx_tool.so"
    assert nvtx == "NVTX goes to another tool (NVTX_INJECTION64_PATH=/opt/tool/libnvtx_tool.so)"


@pytest.mark.parametrize(("path", "tool"), [
    ("/opt/nvidia/nsight-compute/2025.1/target/linux-desktop-glibc_2_11_3-x64/"
     "libTreeLauncherTargetInjection.so", "Nsight Compute"),
    ("/usr/lib/libsomeprofiler.so", "another tool (libsomeprofiler.so)"),
])
def test_another_injection_is_refused_naming_the_tool(path: str, tool: str) -> None:
    with pytest.raises(InputError, match=r"already set to .*" + tool.replace("(", r"\(")
                       .replace(")", r"\)")):
        collector_env({"CUDA_INJECTION64_PATH": path}, **PATHS)


def test_graphcert_s_own_collector_already_set_is_no_conflict() -> None:
    env, _ = collector_env({"CUDA_INJECTION64_PATH": "/c/libgraphcert_collector.so"}, **PATHS)
    assert env["CUDA_INJECTION64_PATH"] == "/c/libgraphcert_collector.so"


@pytest.mark.parametrize(("code", "forwarded", "expected"), [
    (0, (), (0, Ended.EXIT, None)),
    (3, (), (3, Ended.EXIT, None)),
    (-2, (2,), (130, Ended.INTERRUPTED, "SIGINT")),
    (-15, (), (143, Ended.TERMINATED, "SIGTERM")),
    (-9, (), (137, Ended.KILLED, "SIGKILL")),
    (130, (2,), (130, Ended.INTERRUPTED, None)),  # caught the forwarded Ctrl-C, exited 130
    (130, (), (130, Ended.EXIT, None)),  # its own choice of 130
    (143, (15,), (143, Ended.TERMINATED, None)),
])
def test_a_return_code_reads_as_a_shell_reads_it(code: int, forwarded: tuple[int, ...],
                                                  expected: tuple[int, Ended, str | None]
                                                  ) -> None:
    assert ended_by(code, forwarded) == expected


def test_a_stream_is_alive_only_for_its_own_process_not_a_reused_pid(tmp_path: Path) -> None:
    """SYNTHETIC stream names: this test's pid with its real start time, and with another."""
    me = os.getpid()
    mine = start_time(me)
    assert mine is not None
    (tmp_path / f"proc-{me}-{mine}.jsonl").touch()
    (tmp_path / f"proc-{me}-{mine + 1}.jsonl").touch()  # an earlier process with this pid
    assert streams_alive(tmp_path) == frozenset({me})
    assert streams_alive(tmp_path, skip=me) == frozenset()
    (tmp_path / f"proc-{me}-{mine}.jsonl").unlink()
    (tmp_path / f"proc-{me}-{mine}-e1.jsonl").touch()  # the program this process exec'd
    assert streams_alive(tmp_path) == frozenset({me})


@pytest.mark.parametrize(("api", "cuda"), [(130401, 13040), (130000, 13000), (131002, 13100),
                                           (20, 0)])
def test_cupti_s_api_number_reads_on_the_certificate_s_cuda_scale(api: int, cuda: int) -> None:
    assert record_run.cuda_scale(api) == cuda


def test_the_certificate_s_cupti_version_has_one_scale_from_a_stream_or_the_wheel(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import graphcert.cupti.record as cupti_record

    monkeypatch.setattr(cupti_record, "cupti_version", lambda: 13040)  # the wheel: 13.4
    process = _process(1)
    assert record_run.cupti_version_of([_Stream(process, Recording())]) == 13000  # 130001
    assert record_run.cupti_version_of([]) == 13040


def test_a_finished_process_is_not_waited_for(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    started = start_time(child.pid)
    assert started is not None
    (tmp_path / f"proc-{child.pid}-{started}.jsonl").touch()
    child.wait()
    assert start_time(child.pid) is None
    assert wait_for_streams(tmp_path, 5.0) == frozenset()


def test_a_zombie_is_not_alive(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped
        assert start_time(child.pid) is None
    finally:
        child.wait()


def _process(pid: int, gpus: tuple[GpuSeen, ...] = (), rec: Recording | None = None,
             ended: ProcessEnded = ProcessEnded.EXIT) -> ProcessRecorded:
    info = ProcessInfo(pid, 1, ("python", f"worker{pid}.py"), gpus, ended)
    return ProcessRecorded(info, analyse(rec or Recording()))


def test_the_certificate_names_the_gpu_of_the_first_process_that_used_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    h100 = GpuSeen(1, "GPU-aaaa", "NVIDIA H100")
    procs = [_process(10), _process(11, (h100,)), _process(12, (GpuSeen(0, "GPU-b", "x"),))]
    assert record_run.first_gpu(procs) == h100
    assert record_run.first_gpu([_process(10)]) is None
    assert record_run.device_index(None, 3) == 3  # no process used a GPU: --device

    import graphcert.cuda.device as device

    class Info:
        def __init__(self, uuid: str) -> None:
            self.uuid = uuid

    monkeypatch.setattr(device, "device_count", lambda: 3)
    monkeypatch.setattr(device, "device_info", lambda i: Info(["GPU-x", "y", "aaaa"][i]))
    assert record_run.device_index(h100, 0) == 2  # found by UUID, not the child's ordinal

    def no_driver() -> int:
        raise RuntimeError("no driver")

    monkeypatch.setattr(device, "device_count", no_driver)
    assert record_run.device_index(h100, 0) == 1  # the stream's own ordinal


def test_one_snapshot_file_per_topology_and_shape_across_processes(tmp_path: Path) -> None:
    files = sorted(SNAPSHOTS.glob("*.json"))[:2]
    a, b = (load_snapshot(f) for f in files)
    rec1 = Recording(instantiated=(Instantiated(0, (1,), Made.CAPTURE, 10, 5, None, a),))
    rec2 = Recording(instantiated=(Instantiated(0, (1,), Made.CAPTURE, 10, 5, None, a),
                                   Instantiated(1, (2,), Made.CAPTURE, 20, 5, None, b)))
    streams = [_Stream(_process(1, rec=rec1), rec1),
               _Stream(_process(2, rec=rec2), rec2)]
    folder = tmp_path / "record-x.snapshots"
    written = run_record.write_snapshots((s.recording for s in streams), folder)
    assert sorted(p.name for p in folder.iterdir()) == sorted(f.name for f in files)
    assert sorted(written.values()) == sorted(f.name for f in files)
    named = run_record.name_snapshots(streams[1].process, written)
    assert sorted(g.snapshot_file or "" for g in named.recorded.graphs) == \
        sorted(f.name for f in files)
    assert run_record.write_snapshots([], tmp_path / "none.snapshots") == {}
    assert not (tmp_path / "none.snapshots").exists()  # no graph: no folder


class _Stream:
    """Stands in for a ProcessStream."""

    def __init__(self, process: ProcessRecorded, recording: Recording) -> None:
        self.process, self.recording, self.cupti_version = process, recording, 130001


def test_notes_name_outlived_killed_and_refused_processes() -> None:
    out = [_process(5, ended=ProcessEnded.OUTLIVED), _process(6, ended=ProcessEnded.OUTLIVED)]
    refused = ProcessRecorded(ProcessInfo(7, 1, ("server",), (), ProcessEnded.EXIT,
                                          problems=("CUPTI refused: cuptiSubscribe",)),
                              analyse(Recording()))
    notes = record_run.notes_about([*out, _process(8, ended=ProcessEnded.KILLED), refused], 1)
    assert notes == (
        "graphcert record: 2 processes outlived the command (pid 5: python worker5.py, "
        "pid 6: python worker6.py); their records end at their last flush",
        "graphcert record: pid 8: python worker8.py was killed (no end in its stream: "
        "SIGKILL or a crash); its record ends at its last flush",
        "graphcert record: pid 7: server: CUPTI refused: cuptiSubscribe")


def test_the_command_s_own_process_without_a_stream_gets_its_note_with_its_signal() -> None:
    from graphcert.run.record_command import Command, Finished

    command = Command(("server",), ("/bin/server",), "/bin/server")  # SYNTHETIC command
    finished = Finished(40, 139, Ended.KILLED, 1.0, (), "SIGSEGV")
    processes = record_run.with_command_process((_process(41),), command, finished)
    assert record_run.notes_about(processes, 40, finished.signal_name) == (
        "graphcert record: pid 40: /bin/server was killed (the command itself, by SIGSEGV); "
        "its record ends at its last flush",)
    unknown = record_run.notes_about(processes, 40)
    assert "the command itself, no end in its stream: SIGKILL or a crash" in unknown[0]


def test_the_identity_drops_the_interpreter() -> None:
    assert record_run.identity_argv(("python3", "app.py", "--x")) == ("app.py", "--x")
    assert record_run.identity_argv(("/usr/bin/python3.12", "-m", "pkg")) == ("-m", "pkg")
    assert record_run.identity_argv(("vllm", "serve")) == ("vllm", "serve")


def test_source_stands_for_the_script_or_the_whole_module_part() -> None:
    src = Path("/src/server.py")  # SYNTHETIC path
    assert record_run.with_source(("app.py", "--x"), src) == ("/src/server.py", "--x")
    assert record_run.with_source(("-m", "pkg.serve", "--x"), src) == ("/src/server.py", "--x")
    assert run_record.program_identity(record_run.with_source(("-m", "pkg", "--x"), src)) == (
        "/src/server.py:__main__[args=--x]", "server --x")


def test_a_signal_before_the_command_has_a_pid_is_sent_once_it_has_one() -> None:
    from graphcert.run.record_command import Forwarder

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             start_new_session=True)
    forward = Forwarder()
    try:
        forward(15, None)  # SIGTERM while Popen was still starting it
        assert child.poll() is None
        forward.started(child.pid)
        assert child.wait(timeout=20) == -15 and forward.forwarded == [15]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
