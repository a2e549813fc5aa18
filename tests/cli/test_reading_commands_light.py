"""The commands that read certificates (gate, report, show, diff, and --help) import nothing of
the workloads, the frameworks, numpy, CUDA or the GPU procedures, and check sound
certificates without jsonschema (their compiled schemas pass them), in a fresh process over
the certificates of reports/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CERT = "reports/profile-chain-NVIDIA_H200.json"
HEAVY = ("graphcert.workloads", "graphcert.frameworks", "graphcert.run", "graphcert.cuda",
         "graphcert.cupti", "numpy", "cuda", "jsonschema")

SCRIPT = """
import sys
from graphcert.cli import main
sys.argv = ["graphcert", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
heavy = sorted(m for m in sys.modules
               if any(m == h or m.startswith(h + ".") for h in {heavy!r}))
print(f"EXIT {{code}} HEAVY [{{','.join(heavy)}}]", file=sys.stderr)
"""


@pytest.mark.parametrize("args", [
    ["gate", "reports", "--baseline", "reports/.baseline"],
    ["report", "reports", "-o", "{tmp}/r.html"],
    ["show", CERT],
    ["diff", f"reports/.baseline/{Path(CERT).name}", CERT],
    ["--help"],
    ["gate", "--help"],
], ids=lambda a: " ".join(a[:2]))
def test_reading_commands_import_nothing_heavy(args: list[str], tmp_path: Path) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(heavy=HEAVY), *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("EXIT 0 HEAVY"), done.stderr[-2000:]
    assert last == "EXIT 0 HEAVY []", last
