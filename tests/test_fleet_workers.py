"""`--device all` / `--device 0,2`: parsing, device checks and the worker fan-out, on the CPU.

The workers here are small Python scripts standing in for `python -m graphcert ... --device N`
(synthetic: they print made-up output); the GPUs are fake `Gpu` values named TEST-GPU.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphcert.cert.results.fleet import CERT_NAME_ENV, Gpu, short_uuid, worst_exit
from graphcert.cli import cli
from graphcert.commands._options import DeviceSet, parse_devices, resolve_devices
from graphcert.errors import InputError
from graphcert.options import Options
from graphcert.run import fleet

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


def test_worker_command_line_replaces_the_device() -> None:
    args = ["verify", "scan", "--device", "all", "--classes", "2^8..2^10", "--device=0,1"]
    argv = fleet.worker_argv(args, GPUS[1])
    assert argv[:3] == [sys.executable, "-m", "graphcert"]
    assert argv[3:] == ["verify", "scan", "--classes", "2^8..2^10", "--device", "1"]
    env = fleet.worker_env(several=True, progress_lines=False,
                           base={"GRAPHCERT_DEVICE": "all", "PATH": "/bin"})
    assert env == {"PATH": "/bin", CERT_NAME_ENV: "uuid"}
    assert CERT_NAME_ENV not in fleet.worker_env(several=False, progress_lines=True, base={})


def test_worst_exit_and_short_uuid() -> None:
    assert worst_exit([0, 1, 0]) == 1 and worst_exit([0, 2, 1]) == 2
    assert worst_exit([0, -9]) == 137 and worst_exit([]) == 0
    assert short_uuid(GPUS[1].uuid) == "bbbbbbbb"


# A synthetic worker: prints progress, JSON naming its device, or fails as told by argv.
WORKER = r"""
import json, os, sys
dev = sys.argv[sys.argv.index("--device") + 1]
sys.stderr.write("graphcert-progress: total 2\ngraphcert-progress: advance 1\n")
sys.stderr.write(f"certificate: reports/x-{dev}.json\n")
if dev == os.environ.get("FAIL_ON"):
    sys.stderr.write("graphcert: error: synthetic failure on this GPU (fix it)\n")
    sys.exit(2)
print(json.dumps({"device": int(dev), "argv": sys.argv[1:],
                  "cert_name": os.environ.get("GRAPHCERT_CERT_NAME")}))
"""


def _fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    monkeypatch.setattr(fleet, "list_gpus", lambda: list(GPUS))
    real = fleet.worker_argv

    def argv(args: Sequence[str], gpu: Gpu, extra: Sequence[str] = ()) -> list[str]:
        return [sys.executable, str(script), *real(args, gpu, extra)[3:]]

    monkeypatch.setattr(fleet, "worker_argv", argv)


def test_workers_run_in_parallel_and_report_each(tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    seen: list[tuple[int, str, float]] = []
    done: list[int] = []
    jobs = [(g, [sys.executable, str(script), "--device", str(g.index)],
             {"FAIL_ON": "1", "PATH": "/usr/bin:/bin"}) for g in GPUS]
    result = fleet.run_workers("verify", jobs, on_progress=lambda g, w, u: seen.append(
        (g.index, w, u)), on_done=lambda w: done.append(w.gpu.index))
    assert [w.gpu.index for w in result.workers] == [0, 1, 2] and sorted(done) == [0, 1, 2]
    assert result.exit_code == 2
    bad = result.workers[1]
    assert not bad.ok and bad.error == "synthetic failure on this GPU (fix it)"
    assert result.workers[0].ok and result.workers[0].output_json()["device"] == 0
    assert (0, "total", 2.0) in seen and (2, "advance", 1.0) in seen
    assert all(not m.startswith("graphcert-progress") for w in result.workers
               for m in w.messages)
    assert "certificate: reports/x-2.json" in result.workers[2].messages


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
    assert first["output"]["argv"] == ["verify", "scan", "--out", out, "--json",
                                       "--device", "0"]
    assert first["output"]["cert_name"] == "uuid"  # two GPUs: names carry the UUID
    assert second["error"] == "synthetic failure on this GPU (fix it)"
    assert "GPU 2 (TEST-GPU-B, GPU-cccccccc" in result.stderr and "FAILED (exit 2)" in result.stderr
    assert "GPU 0 (TEST-GPU, GPU-aaaaaaaa-0000-0000-0000-000000000000): done" in result.stderr

    one = runner.invoke(cli, ["bench", "chain", "--size", "4", "--device", "1", "--json"],
                        env={"GRAPHCERT_DEVICE": "all"})  # --device N: no fan-out at all
    assert "workers" not in one.stdout


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
    assert shown["cert_name"] is None  # one GPU: today's certificate names


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
    from graphcert.render import bench as bench_view  # a plot matplotlib could draw

    monkeypatch.setattr(bench_view, "check_plot_path", lambda path: path)
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
        on_progress(GPUS[0], "total", 4)
        on_progress(GPUS[0], "advance", 1)
        on_done(WorkerOutcome(GPUS[0], 0, 1.5, "synthetic table\n", ("scan: class 256 pass",)))
        on_done(WorkerOutcome(GPUS[1], 2, 0.5, "", ("graphcert: error: synthetic",),
                              "synthetic"))
    out, err = capsys.readouterr()
    text = out + err  # rich sends redirected stdout through its live console
    assert "GPU 0 (TEST-GPU, GPU-aaaaaaaa-0000-0000-0000-000000000000): done in 1.5 s" in text
    assert "[GPU 0] scan: class 256 pass" in text and "synthetic table" in text
    assert "FAILED (exit 2) after 0.5 s: synthetic" in text
    assert "[GPU 1] graphcert: error" not in text  # the error is said once, on its line
