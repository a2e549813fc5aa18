"""The optional device equality of framework steps (tests/_fakestep.py's DeviceEqualFake,
numpy standing in for the device): a replay that repeats the eager rows is judged on the
device whatever the rows' size, copying nothing; anything else (unequal, cannot say, a
raise) goes on to all_close for large rows and to the host path, which words the failure.
The real frameworks' equal is tested in tests/gpu/test_steps_compare_gpu.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from graphcert.cert.results import Status
from graphcert.classes import parse_buckets
from graphcert.run import steps_compare
from graphcert.run.steps import verify_step

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _fakestep as fake  # noqa: E402


def _on_device(step: object) -> object:
    from dataclasses import replace

    return replace(step, framework=fake.FRAMEWORK_DEVICE)  # type: ignore[type-var]


@pytest.fixture
def small_rows_stay_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default: the synthetic rows are far below DEVICE_COMPARE_MIN_BYTES."""
    monkeypatch.setattr(steps_compare, "DEVICE_COMPARE_MIN_BYTES", 8 << 20)


def test_equal_rows_are_judged_on_the_device_whatever_their_size(
        small_rows_stay_small: None) -> None:
    adapter = fake.DeviceEqualFake()
    result = verify_step(_on_device(fake.SAFE), "safe", parse_buckets("4,8"), samples=3,
                         adapter=adapter)
    assert result.verdict.status is Status.PASS, result.verdict.reasons
    assert adapter.equals == [True] * 6
    assert adapter.verdicts == [] and adapter.host_copies == 0


def test_unequal_small_rows_go_to_the_host_which_words_the_failure(
        small_rows_stay_small: None) -> None:
    host = verify_step(fake.UNSAFE, "batch_mean", parse_buckets("4,8"), samples=4,
                       classes_spec="4,8")
    adapter = fake.DeviceEqualFake()
    device = verify_step(_on_device(fake.UNSAFE), "batch_mean", parse_buckets("4,8"),
                         samples=4, adapter=adapter, classes_spec="4,8")
    assert device.verdict.status is Status.FAIL
    assert [c.reasons for c in device.classes] == [c.reasons for c in host.classes]
    assert False in adapter.equals and adapter.verdicts == []  # small: no all_close
    assert adapter.host_copies == 2 * adapter.equals.count(False)


def test_unequal_large_rows_ask_all_close_before_the_host(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(steps_compare, "DEVICE_COMPARE_MIN_BYTES", 0)
    adapter = fake.DeviceEqualFake(say_equal=False)
    result = verify_step(_on_device(fake.SAFE), "safe", parse_buckets("4"), samples=2,
                         adapter=adapter)
    assert result.verdict.status is Status.PASS, result.verdict.reasons
    assert adapter.equals == [False, False] and adapter.verdicts == [True, True]
    assert adapter.host_copies == 0


@pytest.mark.parametrize("say_equal", [None, "raise"])
def test_an_equality_that_cannot_say_leaves_the_verdict_to_the_host(
        small_rows_stay_small: None, say_equal: str | None) -> None:
    adapter = fake.DeviceEqualFake(say_equal=say_equal)
    safe = verify_step(_on_device(fake.SAFE), "safe", parse_buckets("4"), samples=2,
                       adapter=adapter)
    assert safe.verdict.status is Status.PASS, safe.verdict.reasons
    assert adapter.host_copies == 4  # graph and eager rows of both samples
    unsafe = verify_step(_on_device(fake.UNSAFE), "batch_mean", parse_buckets("8"),
                         samples=2, adapter=fake.DeviceEqualFake(say_equal=say_equal))
    assert unsafe.verdict.status is Status.FAIL
    assert "output 0 row 0 differs" in unsafe.classes[0].reasons[0]
    assert "raised" not in unsafe.classes[0].reasons[0]
