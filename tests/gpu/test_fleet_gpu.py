"""`--device all` on a real machine: one worker per GPU, one certificate per GPU, and the gate
over them passes (topology equal across GPUs). Tests needing more GPUs than the machine has
are skipped, saying how many they need and how many there are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphcert.cert.results.fleet import Gpu, short_uuid

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gpus() -> list[Gpu]:
    """Every GPU this process sees; no driver or no device skips (nothing else does)."""
    from graphcert.errors import NoDriverError
    from graphcert.run.fleet import list_gpus

    try:
        found = list_gpus()
    except NoDriverError as exc:
        pytest.skip(f"no CUDA driver or device: {exc}")
    if not found:
        pytest.skip("no CUDA device")
    return found


def _graphcert(args: list[str], cwd: Path, extra_env: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GRAPHCERT_DEVICE",
                                                            "GRAPHCERT_CERT_NAME")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra_env or {})
    return subprocess.run([sys.executable, "-m", "graphcert", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _gate(folder: Path, cwd: Path) -> dict[str, Any]:
    """`graphcert gate FOLDER --json` with the default policy (no pyproject.toml in cwd)."""
    done = _graphcert(["gate", str(folder), "--json"], cwd)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-2000:])
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_verify_scan_on_every_gpu_then_one_gate(gpus: list[Gpu], tmp_path: Path) -> None:
    if len(gpus) < 2:
        pytest.skip(f"needs at least 2 GPUs; this machine shows {len(gpus)}")
    out = tmp_path / "certs"
    done = _graphcert(["verify", "scan", "--device", "all", "--classes", "2^8..2^10",
                       "--out", str(out), "--json"], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    merged = json.loads(done.stdout)
    assert [w["gpu"]["uuid"] for w in merged["workers"]] == [g.uuid for g in gpus]
    assert all(w["exit_code"] == 0 and w["output"][0]["passed"] for w in merged["workers"])
    names = sorted(p.name for p in out.glob("topology-scan-*.json"))
    assert len(names) == len(gpus), names  # one certificate per GPU, no name collides
    assert all(any(short_uuid(g.uuid) in n for n in names) for g in gpus), names
    certs = [json.loads(p.read_text()) for p in out.glob("*.json")]
    assert sorted(c["environment"]["gpu"]["uuid"] for c in certs) == sorted(g.uuid for g in gpus)
    for line in (f"{g.label}: done in" for g in gpus):
        assert line in done.stderr, done.stderr[-2000:]
    report = _gate(out, tmp_path)
    [cross] = [r for r in report["checks"] if r["rule"] == "allow_cross_gpu_topology"]
    assert cross["status"] == "pass" and f"equal across {len(gpus)} GPUs" in cross["summary"]


def test_device_all_with_one_visible_gpu_keeps_todays_name(gpus: list[Gpu],
                                                           tmp_path: Path) -> None:
    """CUDA_VISIBLE_DEVICES shows one GPU: `--device all` runs one worker, and its
    certificate keeps the single-GPU name (no UUID in it)."""
    one = gpus[0]
    out = tmp_path / "certs"
    done = _graphcert(["verify", "scan", "--device", "all", "--classes", "2^8..2^9",
                       "--out", str(out)], tmp_path, {"CUDA_VISIBLE_DEVICES": one.uuid})
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"GPU 0 ({one.name}, {one.uuid}): done in" in done.stderr
    from graphcert.cert.document import certificate_filename

    assert [p.name for p in out.iterdir()] == [certificate_filename("topology", "scan",
                                                                    one.name)]
    assert done.stdout.startswith(f"== GPU 0: {one.name} ({one.uuid}) ==")
    _gate(out, tmp_path)


def test_unknown_device_names_the_devices(gpus: list[Gpu], tmp_path: Path) -> None:
    done = _graphcert(["verify", "scan", "--device", f"0,{len(gpus)}", "--classes", "2^8"],
                      tmp_path)
    assert done.returncode == 2 and f"no device {len(gpus)}" in done.stderr
    assert f"0 ({gpus[0].name})" in done.stderr and "Traceback" not in done.stderr
