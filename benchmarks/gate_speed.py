"""How fast `graphcert gate` judges 200 certificates, and how fast `gate --help` starts.

Writes 200 synthetic certificates (100 topology, 100 bench; GPU "TEST-GPU") for a throwaway
user workload into a temp dir, then times fresh `python -m graphcert` processes. Targets:
gate over 200 < 1 s, `gate --help` < 300 ms. Printed, not asserted.

    python benchmarks/gate_speed.py [--repeat 5]
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
from graphcert.workloads import registry  # noqa: E402

COUNT = 200


def write_certificates(folder: Path) -> None:
    """COUNT sound certificates of a user workload whose sources are in `folder`."""
    (folder / "w.py").write_text("class W:\n    name = 'w'\n", encoding="utf-8")
    old = Path.cwd()
    os.chdir(folder)  # the reference w.py:W is relative to where the gate runs
    try:  # the options are part of the digest, so each variant has its own
        digests = [registry.source_digest(f"w.py:W[variant={i}]") for i in range(COUNT // 2)]
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
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    env.pop("GITHUB_STEP_SUMMARY", None)
    times, code = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "graphcert", *args], cwd=cwd, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        times.append(time.perf_counter() - start)
        code = done.returncode
        if code not in (0, 1):
            lines = done.stderr.decode().splitlines()
            sys.stderr.write("\n".join(lines[:3] + [f"... ({len(lines)} lines)"]) + "\n")
    return times, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="graphcert-gate-speed-") as tmp:
        folder = Path(tmp)
        write_certificates(folder)
        cases = [
            ("gate --help", ["gate", "--help"], 0.300),
            (f"gate over {COUNT} certificates", ["gate", "reports"], 1.0),
            (f"gate over {COUNT} with a baseline of {COUNT}",
             ["gate", "reports", "--baseline", "baseline", "--junit", "junit.xml",
              "--summary", "summary.md"], 1.0),
        ]
        print(f"python {sys.version.split()[0]}, {opts.repeat} runs each, fresh process per run")
        for label, args, target in cases:
            times, code = time_command(args, folder, opts.repeat)
            best, median = min(times), statistics.median(times)
            verdict = "within" if median < target else "OVER"
            print(f"{label:<48} median {median * 1e3:7.1f} ms  best {best * 1e3:7.1f} ms  "
                  f"exit {code}  ({verdict} target {target * 1e3:.0f} ms)")


if __name__ == "__main__":
    main()
