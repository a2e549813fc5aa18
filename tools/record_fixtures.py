"""Re-record on a GPU every snapshot fixture under tests/fixtures/ (issue 33: now with kernel
parameter values), record the every-kind snapshot and run the node-kinds probe; everything
in one tarball to bring back.

    PYTHONPATH=.:/tmp/site python3 tools/record_fixtures.py [OUTDIR]    (default: $OUT)
    # or through the device script:
    #   COMMIT=... bash tools/device_run.sh py:tools/record_fixtures.py

Writes OUTDIR/fixtures.tgz holding fixtures/snapshots/*.snapshot.json (+ two DOT prints, as
tools/record_on_gpu.sh snapshots writes them), fixtures/every_kind/every_kind.{snapshot.json,
dot} and fixtures/node_kinds_probe.log. Unpack over a checkout with
`tar xzf fixtures.tgz` and copy as tests/fixtures/README.md says; tests/model/test_kernel_params.py
then checks that no fingerprint moved (tests/fixtures/snapshot_fingerprints.json).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "fixtures-out"))
    work = out / "fixtures"
    (work / "snapshots").mkdir(parents=True, exist_ok=True)
    steps = [
        ("snapshots", ["bash", "tools/record_on_gpu.sh", "snapshots", str(work / "snapshots")]),
        ("every_kind", [sys.executable, "tools/record_every_kind.py", str(work / "every_kind")]),
        ("probe", [sys.executable, "tools/probes/node_kinds_probe.py"]),
    ]
    worst = 0
    for name, cmd in steps:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=400)
        log = (proc.stdout + proc.stderr)[-20000:]
        if name == "probe":
            (work / "node_kinds_probe.log").write_text(log)
        print(f"{name}: rc={proc.returncode}\n{log[-1500:]}")
        worst = max(worst, proc.returncode)
    with tarfile.open(out / "fixtures.tgz", "w:gz") as tar:
        tar.add(work, arcname="fixtures")
    print(f"wrote {out / 'fixtures.tgz'}")
    return worst


if __name__ == "__main__":
    sys.exit(main())
