"""The graphcert_verify fixture on a GPU: a built-in workload by name (issue 34: it crashed
with AttributeError inside the plugin) is verified as `graphcert verify` verifies it, and its
certificate is written where told."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[2]


def test_the_fixture_verifies_a_builtin_by_name(gpu_ctx: object, pytester: pytest.Pytester,
                                                monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    # a subprocess (numpy is not imported twice in one process): graphcert from this checkout,
    # and whatever else the caller's PYTHONPATH holds (the device's wheels)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    pytester.makepyfile(test_scan="""
        def test_scan(graphcert_verify):
            result = graphcert_verify("scan", "2^8..2^9", samples=2)
            assert result.verdict.passed and [c.capacity for c in result.classes] == [256, 512]
    """)
    out = tmp_path / "certs"
    result = pytester.runpytest_subprocess("-p", "no:graphcert", "-p", "graphcert.pytest_plugin",
                                           f"--graphcert-out={out}")
    assert result.parseoutcomes().get("passed") == 1, result.stdout.str()
    (cert,) = out.glob("topology-scan-*.json")
    assert json.loads(cert.read_text())["verdict"]["status"] == "pass"
