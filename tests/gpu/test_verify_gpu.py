"""verify on a GPU: a correct workload passes; frozen launch geometry fails for that reason;
faults are reported per size or class and the run goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphcert.cert.results.verdict import Status
from graphcert.cuda.context import RunContext
from graphcert.kinds.topology.result import SkippedClass
from graphcert.run.verify import verify

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "workloads" / "scale.py"
CLASSES = [1 << k for k in range(0, 13)]


def _ref(name: str) -> str:
    return f"{FIXTURE}:{name}"


def test_correct_workload_passes_every_class(gpu_ctx: RunContext) -> None:
    result = verify(gpu_ctx, _ref("Scale"), CLASSES, samples=4, seed=3)
    reports = result.classes
    assert [r.status for r in reports] == ["pass"] * len(CLASSES), [r.reasons for r in reports]
    assert result.verdict.status is Status.PASS and result.verdict.passed
    for r in reports:
        assert all(s.output_equal and s.param_update_output_equal for s in r.samples)
        assert all(s.update is not None and s.update.result == "success" for s in r.samples)
    assert {t.change for t in result.transitions} == {"launch shape"}
    assert {"capture", "instantiate", "update", "replay", "compare"} <= set(result.timings_s)


def test_frozen_launch_geometry_fails_naming_the_node(gpu_ctx: RunContext) -> None:
    result = verify(gpu_ctx, _ref("FrozenScale"), [1024, 4096], samples=4, seed=3)
    assert result.verdict.status is Status.FAIL
    for r in result.classes:
        assert r.status == "fail"
        text = " ".join(r.reasons)
        assert "launch geometry frozen at capture time" in text
        assert "kernel t_scale_u32" in text and "node " in text
        assert any(s.param_update_output_equal is False for s in r.samples)


def test_record_exception_names_workload_and_size_and_run_goes_on(gpu_ctx: RunContext) -> None:
    reports = verify(gpu_ctx, _ref("RaisesInRecord"), [1, 8, 16], samples=3, seed=1).classes
    assert reports[0].status == "pass"
    for r in reports[1:]:
        edge = r.capacity // 2 + 1
        assert r.status == "fail"
        bad = [s for s in r.samples if s.error]
        assert [s.n for s in bad] == [edge]
        assert bad[0].error is not None
        assert "raises-in-record" in bad[0].error and f"n={edge:,}" in bad[0].error
        assert all(s.output_equal for s in r.samples if s.n != edge)


def test_invalidated_capture_is_reported_for_that_size(gpu_ctx: RunContext) -> None:
    (r,) = verify(gpu_ctx, _ref("AllocatesInRecord"), [16], samples=4, seed=1).classes
    assert r.status == "fail"
    (bad,) = [s for s in r.samples if s.error]
    assert bad.n == 9 and bad.error is not None and "cuMemAlloc" in bad.error
    assert all(s.output_equal for s in r.samples if s.n != 9)


def test_class_too_large_is_skipped_and_verdict_incomplete(gpu_ctx: RunContext) -> None:
    result = verify(gpu_ctx, _ref("Huge"), [1 << 19, 1 << 20], samples=2, seed=1)
    reports = result.classes
    assert [r.status for r in reports] == ["pass", "skipped"]
    assert isinstance(reports[1], SkippedClass) and "needs about" in reports[1].reason
    # issue 14: a class that could not run never lets the verdict pass
    assert result.verdict.status is Status.INCOMPLETE and not result.verdict.passed
    assert any("not verified" in why for why in result.verdict.reasons)


@pytest.mark.parametrize("name", ["scan", "join", "fixpoint", "decode", "resident", "chain",
                                  "converge"])
def test_builtin_verifies_small_classes(gpu_ctx: RunContext, name: str) -> None:
    reports = verify(gpu_ctx, name, [1, 256, 512, 65536], samples=4, seed=5).classes
    assert all(r.status == "pass" for r in reports), [(r.capacity, r.reasons) for r in reports]
