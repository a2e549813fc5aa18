"""`--device all` / `--device 0,2`: parsing, device checks and the worker fan-out, on the CPU.

The workers here are small Python scripts standing in for `python -m graphcert.worker`: they
speak the real protocol (graphcert.run.worker.serve reads the job and sends the events and the
reply) around a synthetic command that prints made-up output; the GPUs are fake `Gpu` values
named TEST-GPU.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphcert.cert.results.fleet import Gpu, ProgressEvent, WorkerError, short_uuid, worst_exit
from graphcert.cli import cli
from graphcert.commands._options import DeviceSet, parse_devices, resolve_devices
from graphcert.errors import InputError
from graphcert.options import Options
from graphcert.run import fleet, worker
from graphcert.run.worker import CommandJob

ROOT = Path(__file__).resolve().parents[2]
# A worker's environment that finds this checkout's graphcert.
PYTHONPATH = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

GPUS = [Gpu(0, "TEST-GPU", "GPU-aaaaaaaa-0000-0000-0000-000000000000"),
        Gpu(1, "TEST-GPU", "GPU-bbbbbbbb-0000-0000-0000-000000000000"),
        Gpu(2, "TEST-GPU-B", "GPU-cccccccc-0000-0000-0000-000000000000")]


@pytest.mark.parametrize(("text", "want"), [
    ("3", 3), (" all ", DeviceSet(None, "all")), ("0,2", DeviceSet((0, 2), "0,2")),
    ("1,", None), ("0,0", None), ("-1", None), ("abc", None), ("", None)])
def test_device_spec_parses_or_is_one_line(text: str, want: int | DeviceSet | None) -> None:
    if want is None:
        with pytest.raises(InputError) as err:
            parse_devices(text)
        assert "\n" not in err.value.one_line() and "--device" in err.value.one_line()
    else:
        assert parse_devices(text) == want


def test_device_variable_takes_the_same_forms() -> None:
    def read(value: str) -> Options:
        return Options.from_environ({"GRAPHCERT_DEVICE": value}, signing=False)

    assert resolve_devices(None, read("all")) == DeviceSet(None, "all")
    assert resolve_devices(None, read(" 0,2 ")) == DeviceSet((0, 2), "0,2")
    assert resolve_devices("1", read("0,2")) == 1  # --device wins over the variable
    with pytest.raises(InputError, match=r"\$GRAPHCERT_DEVICE='zero' is not a device index"):
        resolve_devices(None, read("zero"))


def test_unknown_index_names_the_devices_there_are() -> None:
    assert fleet.select_gpus(None, GPUS) == GPUS
    assert fleet.select_gpus((2, 0), GPUS) == [GPUS[2], GPUS[0]]
    with pytest.raises(InputError) as err:
        fleet.select_gpus((0, 7), GPUS)
    line = err.value.one_line()
    assert "no device 7" in line and "0 (TEST-GPU), 1 (TEST-GPU), 2 (TEST-GPU-B)" in line
    with pytest.raises(InputError, match="no CUDA device"):
        fleet.select_gpus(None, [])


def test_worker_job_replaces_the_device_and_carries_names_and_progress() -> None:
    params = {"workloads": ("scan",), "device": DeviceSet((0, 1), "0,1"),
              "classes": "2^8..2^10"}
    job = fleet.command_job("verify", params, GPUS[1], several=True, progress=False)
    assert job == CommandJob("verify", {"workloads": ("scan",), "classes": "2^8..2^10"}, 1,
                             uuid_names=True, progress=False)
    one = fleet.command_job("verify", params, GPUS[0], several=False, progress=True)
    assert one.uuid_names is None and one.progress  # one GPU: names as $GRAPHCERT_CERT_NAME says
    # what the worker needs travels in its job, not in variables of its environment
    env = fleet.worker_env(base={"GRAPHCERT_DEVICE": "all", "PATH": "/bin"},
                           extra={"COLUMNS": "90"})
    assert env == {"PATH": "/bin", "COLUMNS": "90"}


def test_worst_exit_and_short_uuid() -> None:
    assert worst_exit([0, 1, 0]) == 1 and worst_exit([0, 2, 1]) == 2
    assert worst_exit([0, -9]) == 137 and worst_exit([]) == 0
    assert short_uuid(GPUS[1].uuid) == "bbbbbbbb"


# A synthetic worker: the real protocol around a command that sends progress, says where its
# certificate went, then prints JSON naming its job, or fails as FAIL_ON (a device or "all")
# tells it.
WORKER = r"""
import json, os, sys
from graphcert.cert.results.fleet import ProgressEvent
from graphcert.errors import InputError
from graphcert.run.worker import serve

def command(job, events):
    if events is not None:
        events(ProgressEvent("total", 2))
        events(ProgressEvent("advance", 1))
    sys.stderr.write(f"certificate: reports/x-{job.device}.json\n")
    if os.environ.get("FAIL_ON") in (str(job.device), "all"):
        raise InputError("synthetic failure on this GPU", hint="fix it")
    print(json.dumps({"device": job.device, "command": job.command, "params": job.params,
                      "uuid_names": job.uuid_names, "progress": job.progress}))
    return 0

sys.exit(serve(sys.argv[1:], command))
"""


def _fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, code: str = WORKER) -> None:
    """Workers are the synthetic script `code`; the machine shows the fake GPUS."""
    script = tmp_path / "worker.py"
    script.write_text(code)
    monkeypatch.setattr(fleet, "list_gpus", lambda: list(GPUS))
    monkeypatch.setattr(worker, "worker_command", lambda: [sys.executable, str(script)])
    monkeypatch.setenv("PYTHONPATH", PYTHONPATH)


def test_workers_run_in_parallel_and_report_each(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    _fake(monkeypatch, tmp_path)
    seen: list[tuple[int, ProgressEvent]] = []
    done: list[int] = []
    jobs = [(g, CommandJob("verify", {"workloads": ("scan",)}, g.index, progress=True),
             {"FAIL_ON": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": PYTHONPATH}) for g in GPUS]
    result = fleet.run_workers("verify", jobs, on_progress=lambda g, e: seen.append(
        (g.index, e)), on_done=lambda w: done.append(w.gpu.index))
    assert [w.gpu.index for w in result.workers] == [0, 1, 2] and sorted(done) == [0, 1, 2]
    assert result.exit_code == 2
    bad = result.workers[1]
    assert not bad.ok and bad.error == WorkerError("synthetic failure on this GPU", "fix it", 2)
    assert bad.to_json()["error"] == "synthetic failure on this GPU (fix it)"
    assert result.workers[0].ok and result.workers[0].output_json()["device"] == 0
    assert (0, ProgressEvent("total", 2.0)) in seen and (2, ProgressEvent("advance", 1.0)) in seen
    assert "certificate: reports/x-2.json" in result.workers[2].messages
    assert result.workers[2].messages == ("certificate: reports/x-2.json",)  # nothing else


def test_cli_device_all_merges_json_and_exits_worst(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    _fake(monkeypatch, tmp_path)
    out = str(tmp_path / "certs")
    runner = CliRunner()
    result = runner.invoke(cli, ["verify", "scan", "--device", "0,2", "--out", out, "--json"],
                           env={"FAIL_ON": "2"})
    assert result.exit_code == 2, result.output
    merged = json.loads(result.stdout)
    assert merged["command"] == "verify" and merged["exit_code"] == 2
    first, second = merged["workers"]
    assert first["gpu"]["index"] == 0 and first["exit_code"] == 0
    sent = first["output"]["params"]  # the parsed parameters, typed; the job names the GPU
    assert first["output"]["command"] == "verify" and first["output"]["device"] == 0
    assert sent["workloads"] == ["scan"] and sent["out_dir"] == out and sent["as_json"] is True
    assert "device" not in sent
    assert first["output"]["uuid_names"] is True  # two GPUs: names carry the UUID
    assert first["output"]["progress"] is False  # no bars drawn: no events asked for
    assert second["error"] == "synthetic failure on this GPU (fix it)"
    assert "GPU 2 (TEST-GPU-B, GPU-cccccccc" in result.stderr and "FAILED (exit 2)" in result.stderr
    assert "GPU 0 (TEST-GPU, GPU-aaaaaaaa-0000-0000-0000-000000000000): done" in result.stderr

    one = runner.invoke(cli, ["bench", "chain", "--size", "4", "--device", "1", "--json"],
                        env={"GRAPHCERT_DEVICE": "all"})  # --device N: no fan-out at all
    assert "workers" not in one.stdout


def test_the_same_refusal_on_every_gpu_is_said_once(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    """Every worker replied with the same typed error: after each GPU's line, the parent says
    it as the command line says an error (one line, its fix, exit 2), with no summary."""
    _fake(monkeypatch, tmp_path)
    result = CliRunner().invoke(cli, ["verify", "scan", "--device", "0,2", "--out",
                                      str(tmp_path / "certs")], env={"FAIL_ON": "all"})
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines()[-1] == \
        "graphcert: error: synthetic failure on this GPU (fix it)"
    assert result.stderr.count("graphcert: error:") == 1 and "GPU(s)" not in result.stderr
    assert "Traceback" not in result.output


def test_cli_one_gpu_keeps_todays_names_and_prints_tables(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    _fake(monkeypatch, tmp_path)
    result = CliRunner().invoke(cli, ["verify", "scan", "--out", str(tmp_path)],
                                env={"GRAPHCERT_DEVICE": "0"})
    # GRAPHCERT_DEVICE=0 is one device, not a fleet: no worker runs (here: no driver, exit 3)
    assert result.exit_code == 3 and "== GPU" not in result.stdout
    result = CliRunner().invoke(cli, ["verify", "scan", "--device", "1,", "--out",
                                      str(tmp_path)])
    assert result.exit_code == 2 and "is not a device index" in result.output
    monkeypatch.setattr(fleet, "list_gpus", lambda: [GPUS[0]])
    result = CliRunner().invoke(cli, ["verify", "scan", "--device", "all", "--out",
                                      str(tmp_path)])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout.split("\n", 1)[1])
    assert result.stdout.startswith("== GPU 0: TEST-GPU (GPU-aaaaaaaa")
    assert shown["uuid_names"] is None  # one GPU: today's certificate names


def test_cli_unknown_device_and_bad_workload_start_nothing(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    _fake(monkeypatch, tmp_path)
    started: list[object] = []
    monkeypatch.setattr(fleet, "run_workers", lambda *a, **k: started.append(a))
    result = CliRunner().invoke(cli, ["verify", "scan", "--device", "0,5"])
    assert result.exit_code == 2 and "no device 5" in result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1
    result = CliRunner().invoke(cli, ["capture", "nosuchworkload", "--device", "all"])
    assert result.exit_code == 2 and "unknown workload" in result.output
    from graphcert.kinds.sweep import views as sweep_view  # a plot matplotlib could draw

    monkeypatch.setattr(sweep_view, "check_plot_path", lambda path: path)
    result = CliRunner().invoke(cli, ["bench", "chain", "--sweep", "kernels=1,10", "--plot",
                                      str(tmp_path / "p.png"), "--device", "all"])
    assert result.exit_code == 2 and "--plot draws one GPU's sweep" in result.output
    assert started == []


def test_terminal_shows_a_bar_per_gpu_and_a_line_when_each_ends(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from graphcert.cert.results.fleet import WorkerOutcome
    from graphcert.render import fleet as view

    monkeypatch.setattr(view, "bars_allowed", lambda options: True)
    display = view.fleet_display(GPUS[:2], "verify", as_json=False, options=Options())
    with display as (on_progress, on_done, bars):
        assert bars and on_progress is not None
        on_progress(GPUS[0], ProgressEvent("total", 4))
        on_progress(GPUS[0], ProgressEvent("advance", 1))
        on_done(WorkerOutcome(GPUS[0], 0, 1.5, "synthetic table\n", ("scan: class 256 pass",)))
        on_done(WorkerOutcome(GPUS[1], 2, 0.5, "", ("synthetic log line",),
                              WorkerError("synthetic", None, 2)))
    out, err = capsys.readouterr()
    text = out + err  # rich sends redirected stdout through its live console
    assert "GPU 0 (TEST-GPU, GPU-aaaaaaaa-0000-0000-0000-000000000000): done in 1.5 s" in text
    assert "[GPU 0] scan: class 256 pass" in text and "synthetic table" in text
    assert "FAILED (exit 2) after 0.5 s: synthetic" in text
    assert "[GPU 1] synthetic log line" in text  # what it printed besides its error


def test_certificate_names_follow_the_job_then_the_variable() -> None:
    """A worker's job says whether names carry the GPU's short UUID; without a job (None),
    $GRAPHCERT_CERT_NAME=uuid says so (read into the Options at the command line), as one job
    per GPU sharing a folder sets it."""
    from graphcert.invocation import Invocation, WorkerHooks
    from graphcert.options import Options
    from graphcert.run.environment import gpu_label

    def names(job: bool | None, environ: dict[str, str]) -> bool:
        """The certificate names a worker with this job's say uses (None: no say)."""
        hooks = WorkerHooks(lambda error: None, None, job)
        return Invocation.from_environ(environ, hooks=hooks).options.uuid_names

    env = {"gpu": {"name": "TEST-GPU", "uuid": GPUS[1].uuid}}
    assert gpu_label(env, True) == "TEST-GPU-bbbbbbbb"
    assert gpu_label(env) == gpu_label(env, False) == "TEST-GPU"
    unset, uuid = Options.from_environ({}), Options.from_environ({"GRAPHCERT_CERT_NAME": "uuid"})
    assert not unset.uuid_names and uuid.uuid_names
    variable = {"GRAPHCERT_CERT_NAME": "uuid"}
    assert names(None, {}) is False and names(None, variable) is True
    assert names(False, variable) is False  # the job said no
    assert names(True, {}) is True
