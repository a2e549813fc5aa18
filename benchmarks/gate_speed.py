"""How fast the certificate-reading commands run, each in a fresh `python -m graphcert`.

Over the repository's reports/ (every kind, recorded on GPUs): `gate reports/ --baseline
reports/.baseline` and `report reports/ -o FILE`, target <= 300 ms each; `gate --help`, as
fast as it gets (no target). Over 200 synthetic certificates (100 topology, 100 bench; GPU
"TEST-GPU") of a throwaway user workload in a temp dir: the gate alone and with a baseline
of 200, target < 1 s. Each case runs once untimed first (the compiled schema checks are then
in graphcert's cache folder, as after any earlier run). Printed, not asserted; whether Python
writes bytecode is printed too (with PYTHONDONTWRITEBYTECODE set, every graphcert module is
compiled again in every process).

    python benchmarks/gate_speed.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from _certfactory import bench_results, certificate, topology_results  # noqa: E402

from graphcert.cert.document import write_certificate  # noqa: E402
from graphcert.workloadref import source_digest  # noqa: E402

COUNT = 200


def write_certificates(folder: Path) -> None:
    """COUNT sound certificates of a user workload whose sources are in `folder`."""
    (folder / "w.py").write_text("class W:\n    name = 'w'\n", encoding="utf-8")
    old = Path.cwd()
    os.chdir(folder)  # the reference w.py:W is relative to where the gate runs
    try:  # the options are part of the digest, so each variant has its own
        digests = [source_digest(f"w.py:W[variant={i}]") for i in range(COUNT // 2)]
    finally:
        os.chdir(old)
    for i in range(COUNT):
        kind = "topology" if i % 2 == 0 else "bench"
        ref = f"w.py:W[variant={i // 2}]"
        digest = digests[i // 2]
        assert digest is not None
        results = (topology_results((256, 512, 1024, 2048)) if kind == "topology"
                   else bench_results((256, 1024, 4096)))
        for sub in ("reports", "baseline"):
            write_certificate(folder / sub / f"{kind}-w{i // 2:03d}-TEST-GPU.json",
                              certificate(kind, ref=ref, digest=digest, results=results))


def time_command(args: list[str], cwd: Path, repeat: int) -> tuple[list[float], int]:
    """Wall seconds of `repeat` fresh processes (after one untimed), and the last exit code."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    env.pop("GITHUB_STEP_SUMMARY", None)
    times, code = [], 0
    for i in range(repeat + 1):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "graphcert", *args], cwd=cwd, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        if i:
            times.append(time.perf_counter() - start)
        code = done.returncode
        if code not in (0, 1):
            lines = done.stderr.decode().splitlines()
            sys.stderr.write("\n".join(lines[:3] + [f"... ({len(lines)} lines)"]) + "\n")
    return times, code


def show(label: str, times: list[float], code: int, target: float | None) -> None:
    best, median = min(times), statistics.median(times)
    verdict = ("no target" if target is None else
               f"{'within' if median <= target else 'OVER'} target {target * 1e3:.0f} ms")
    print(f"{label:<52} median {median * 1e3:7.1f} ms  best {best * 1e3:7.1f} ms  "
          f"exit {code}  ({verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    opts = parser.parse_args()
    bytecode = "off (PYTHONDONTWRITEBYTECODE)" if sys.flags.dont_write_bytecode else "on"
    print(f"python {sys.version.split()[0]}, {opts.repeat} runs each, fresh process per run, "
          f"bytecode cache {bytecode}")
    with tempfile.TemporaryDirectory(prefix="graphcert-gate-speed-") as tmp:
        page = str(Path(tmp) / "report.html")
        for label, args, target in (
            ("gate --help", ["gate", "--help"], None),
            ("gate reports/ --baseline reports/.baseline",
             ["gate", "reports", "--baseline", "reports/.baseline"], 0.300),
            ("report reports/ -o FILE", ["report", "reports", "-o", page], 0.300),
        ):
            show(label, *time_command(args, ROOT, opts.repeat), target)
        folder = Path(tmp) / "synthetic"
        folder.mkdir()
        write_certificates(folder)
        for label, args, target in (
            (f"gate over {COUNT} certificates", ["gate", "reports"], 1.0),
            (f"gate over {COUNT} with a baseline of {COUNT}",
             ["gate", "reports", "--baseline", "baseline", "--junit", "junit.xml",
              "--summary", "summary.md"], 1.0),
        ):
            show(label, *time_command(args, folder, opts.repeat), target)


if __name__ == "__main__":
    main()
