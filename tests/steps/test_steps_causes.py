"""Why a framework step's bucket fails (issue 33 items 1 and 2), over the synthetic framework
of tests/_fakestep.py on the CPU: padding dependence, stale capture (both kinds of
evidence), moved memory (through the check's hook), a step that raises, a cause not found;
repeated failures collapsed within a bucket and across buckets; pad values per input and
what the certificate records. The GPU side is tests/gpu/test_steps_causes_gpu.py."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import graphcert
from graphcert.cert.document import certificate_of, validate_certificate
from graphcert.cert.results.verdict import Status
from graphcert.errors import InputError
from graphcert.frameworks.padding import (
    PadValueError,
    describe,
    fill_rows,
    recorded,
    resolve,
)
from graphcert.kinds.topology.causes import Cause
from graphcert.kinds.topology.result import ClassResult, SampleResult, VerifyResult
from graphcert.run.steps import StepVerifier

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
import _certfactory as certfactory  # noqa: E402
import _fakestep as fake  # noqa: E402

SYN = fake.FRAMEWORK


def _failed(result: VerifyResult) -> list[ClassResult]:
    return [c for c in result.classes if isinstance(c, ClassResult) and not c.passed]


def _causes(cls: ClassResult) -> set[Cause | None]:
    return {s.cause for s in cls.samples if not s.ok}


# --- padding dependence -------------------------------------------------------------------

def test_padding_dependence_is_named_with_both_fills_and_the_fix() -> None:
    result = graphcert.verify_step(fake.UNSAFE, "4,8", samples=4)
    (_, cls) = _failed(result)
    assert cls.cause is Cause.PADDING and _causes(cls) == {Cause.PADDING}
    why = cls.reasons[0]  # bucket 8 holds 5..8
    assert why.startswith("step batch_mean, bucket 8, n=5: output 0 row 0 differs"), why
    assert "padding dependence: its real rows change when only the 3 padded rows" in why
    assert "(padded with 0, then with NaN)" in why and "mask the padding" in why
    assert cls.reasons[1] == ("2 more sampled size(s) of bucket 8 fail the same way "
                              "(padding dependence)")
    assert cls.samples[-1].n == 8 and cls.samples[-1].ok  # nothing padded: no failure
    assert result.verdict.reasons[-1] == \
        "1 more class(es) fail the same way (padding dependence): 8"


# Slot-masked step: rows whose slot is -1 are left out of a sum over the batch, as an engine
# leaves padded slots out of its cache writes; every real row reads that sum.
def masked(x: np.ndarray, slots: np.ndarray) -> np.ndarray:
    keep = (slots >= 0).astype(x.dtype)[:, None]
    return x + (x * keep).sum(axis=0, keepdims=True)


def make_masked(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(100 + n)
    return (rng.standard_normal((n, 4)).astype(np.float32), np.arange(n, dtype=np.int64))


@pytest.mark.parametrize("pad", [(1.0, -1), [1.0, -1], {0: 1.0, 1: -1}, {1: -1}])
def test_a_pad_value_per_input_passes_and_is_recorded(pad: Any) -> None:
    step = graphcert.step(masked, make_masked, framework=SYN, name="masked", pad_value=pad,
                          rtol=1e-5, atol=1e-5)
    result = graphcert.verify_step(step, "4,8", samples=3)
    assert result.verdict.status is Status.PASS, result.verdict.reasons
    assert result.settings is not None
    want = [0.0, -1] if pad == {1: -1} else [1.0, -1]
    assert result.settings.to_json()["pad_value"] == want
    cert = certificate_of(result, workload=certfactory.workload("x.py:MASKED", "masked"),
                          environment=certfactory.environment())
    assert validate_certificate(cert) == []
    assert cert["results"]["settings"]["pad_value"] == want
    back = VerifyResult.from_json(cert["results"], cert["verdict"])
    assert back.settings == result.settings


def test_one_pad_value_for_every_input_fails_as_padding_dependence() -> None:
    # 1.0 in the slots too: the padded rows count in the sum
    step = graphcert.step(masked, make_masked, framework=SYN, name="masked", pad_value=1.0,
                          rtol=1e-5, atol=1e-5)
    result = graphcert.verify_step(step, "8", samples=3)
    (cls,) = _failed(result)
    assert cls.cause is Cause.PADDING
    # the poison: NaN for the floats, the real rows repeated for the integer slots
    assert "(padded with 1, then with [NaN, copies of the real rows])" in cls.reasons[0]
    assert result.settings is not None and result.settings.to_json()["pad_value"] == 1.0


def test_a_declared_poison_is_used() -> None:
    step = graphcert.step(fake.batch_mean, fake.make_inputs, framework=SYN, rtol=1e-5,
                          atol=1e-6, poison=1e6)
    (cls,) = _failed(graphcert.verify_step(step, "4", samples=2))
    assert cls.cause is Cause.PADDING and "then with 1e+06)" in cls.reasons[0]


# --- stale capture ------------------------------------------------------------------------

class Counter:
    """A Python float the eager path bumps on every call (a step counter folded into the
    positions); the graph replays the value it was captured with."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self, x: np.ndarray) -> np.ndarray:
        t = fake.host_number("t", self.t)
        if not fake.replaying():
            self.t += 1.0
        return x + t


def test_a_closure_number_the_eager_path_changes_is_stale_capture_not_padding() -> None:
    step = graphcert.step(Counter(), fake.make_inputs, framework=SYN, name="counter")
    result = graphcert.verify_step(step, "4,8", samples=3)
    assert result.verdict.status is Status.FAIL  # the verdict is unchanged: it fails
    for cls in _failed(result):
        assert cls.cause is Cause.STALE_CAPTURE and _causes(cls) == {Cause.STALE_CAPTURE}
        assert "padding dependence" not in " ".join(cls.reasons)
        why = cls.reasons[0]
        assert "stale capture: two eager calls at n=" in why, why
        assert "pass what changes as an input from make_inputs" in why
    # one line for bucket 4's reasons and the count, one for bucket 8 counted
    assert result.verdict.reasons[-1] == \
        "1 more class(es) fail the same way (stale capture): 8"


class MadeCounter:
    """A number that make_inputs bumps (each batch gets a new one) and the step reads: two
    eager calls on the same inputs agree, but the graph keeps the captured batch's number."""

    def __init__(self) -> None:
        self.batches = 0

    def make(self, n: int) -> tuple[np.ndarray]:
        self.batches += 1
        return fake.make_inputs(n)

    def fn(self, x: np.ndarray) -> np.ndarray:
        return x * fake.host_number("batches", float(self.batches))


def test_a_replay_that_differs_with_nothing_padded_is_stale_capture() -> None:
    made = MadeCounter()
    step = graphcert.step(made.fn, made.make, framework=SYN, name="made", warmup=0)
    (cls,) = _failed(graphcert.verify_step(step, "8", samples=3))
    assert cls.cause is Cause.STALE_CAPTURE
    first = cls.reasons[0]
    assert first.startswith("step made, bucket 8, n=1:"), first
    assert ("stale capture: with nothing padded (n=8, the bucket's size) the replay still "
            "differs from the eager call") in first
    last = next(s for s in cls.samples if s.n == 8)
    assert last.cause is Cause.STALE_CAPTURE
    assert "with nothing padded (n=8, the bucket's size) the replay differs" in (last.error
                                                                                 or "")


# --- moved memory, a raising step, a cause not found ---------------------------------------

def test_moved_memory_is_named_by_node_and_parameter_through_the_checks_hook() -> None:
    """The moved-memory check plugs in as StepVerifier(moved_memory=...): a dangling pointer
    it finds is the cause, named by kernel node and parameter."""
    adapter = fake.FakeAdapter()
    verifier = StepVerifier(fake.UNSAFE, "batch_mean", adapter, 3, 0,
                            moved_memory=lambda captured: (1, 5))
    cls = verifier.verify_bucket(8, 4)
    assert isinstance(cls, ClassResult) and not cls.passed
    assert cls.cause is Cause.MOVED_MEMORY and _causes(cls) == {Cause.MOVED_MEMORY}
    assert "moved memory: kernel node 1 parameter 5 points outside every live allocation" \
        in cls.reasons[0]
    assert "keep every buffer the graph reads alive" in cls.reasons[0]


def test_a_step_that_raises_at_a_size_says_so() -> None:
    def picky(x: np.ndarray) -> np.ndarray:
        if len(x) == 1:
            raise ValueError("no batch of one")
        return fake.rowwise(x)

    step = graphcert.step(picky, fake.make_inputs, framework=SYN, name="picky")
    (cls,) = _failed(graphcert.verify_step(step, "4", samples=2))
    assert cls.cause is Cause.RAISED
    assert cls.reasons == ("step picky, bucket 4, n=1: the step raised ValueError: no batch of "
                           "one",)


def test_a_step_reading_its_batch_size_is_a_cause_not_found() -> None:
    def by_size(x: np.ndarray) -> np.ndarray:
        return x * float(len(x))  # the bucket's size in the graph

    step = graphcert.step(by_size, fake.make_inputs, framework=SYN, name="by_size")
    (cls,) = _failed(graphcert.verify_step(step, "8", samples=3))
    assert cls.cause is Cause.UNEXPLAINED
    assert "cause not found: neither padding" in cls.reasons[0]
    assert "x.shape[0]" in cls.reasons[0]


# --- repeated failures --------------------------------------------------------------------

def test_a_capture_refused_in_every_bucket_is_one_line_and_a_count() -> None:
    result = graphcert.verify_step(fake.SYNCING, "vllm:64", samples=2)
    buckets = [c.capacity for c in result.classes]
    assert len(buckets) == 11 and all(isinstance(c, ClassResult) and c.cause is Cause.CAPTURE
                                      for c in result.classes)
    first, count = result.verdict.reasons
    assert first.startswith("class 1: step syncs, bucket 1: synthetic could not capture it")
    assert count == ("10 more class(es) fail the same way (capture refused): 2, 4, 8, 16, 24, "
                     "32, 40, 48, ...")
    # each class still says its own reason in the certificate
    assert all(c.reasons for c in result.classes)


def test_classes_failing_for_other_causes_are_listed_apart() -> None:
    def cls(capacity: int, cause: Cause, *sample_causes: Cause) -> ClassResult:
        samples = tuple(SampleResult(i + 1, output_equal=False, error="x", cause=c)
                        for i, c in enumerate(sample_causes))
        return ClassResult(capacity, False, (f"why {capacity}",), samples=samples, cause=cause)

    verdict = VerifyResult.judge([
        cls(4, Cause.PADDING, Cause.PADDING), cls(8, Cause.STALE_CAPTURE, Cause.STALE_CAPTURE),
        cls(16, Cause.PADDING, Cause.PADDING, Cause.STALE_CAPTURE),  # mixed: apart
        cls(32, Cause.PADDING, Cause.PADDING), ClassResult(64, False, ("workload",))])
    assert verdict.reasons == (
        "class 4: why 4", "1 more class(es) fail the same way (padding dependence): 32",
        "class 8: why 8", "class 16: why 16", "class 64: workload")


def test_the_cause_is_recorded_and_reads_back() -> None:
    result = graphcert.verify_step(fake.UNSAFE, "4,8", samples=3)
    cert = certificate_of(result, workload=certfactory.workload("x.py:UNSAFE", "batch_mean"),
                          environment=certfactory.environment())
    assert validate_certificate(cert) == []
    doc = cert["results"]["classes"][1]
    assert doc["cause"] == "padding"
    assert [s.get("cause") for s in doc["samples"]] == ["padding", "padding", None]
    back = VerifyResult.from_json(cert["results"], cert["verdict"])
    assert back.to_json() == result.to_json()
    # the certificate joins a class's reasons into one; the count line is the same
    assert VerifyResult.judge(back.classes).reasons[-1] == result.verdict.reasons[-1] == \
        "1 more class(es) fail the same way (padding dependence): 8"


# --- declaring pad values -----------------------------------------------------------------

@pytest.mark.parametrize(("pad", "words"), [
    (float("nan"), "must be finite"), ("0", "is not a number"), ((), "empty sequence"),
    ({-1: 0.0}, "has key -1"), ((0.0, True), r"pad_value\[1\]"), ({"a": 1}, "has key 'a'")])
def test_a_bad_pad_value_is_refused_when_declared(pad: Any, words: str) -> None:
    with pytest.raises(InputError, match=words):
        graphcert.step(fake.rowwise, fake.make_inputs, framework=SYN, pad_value=pad)


@pytest.mark.parametrize(("pad", "words"), [
    ((0.0, -1), "pad_value has 2 value.s. but make_inputs returns 1 input"),
    ({3: -1}, "pad_value names input 3 but make_inputs returns 1 input")])
def test_a_pad_value_that_does_not_fit_the_inputs_stops_verify(pad: Any, words: str) -> None:
    step = graphcert.step(fake.rowwise, fake.make_inputs, framework=SYN, pad_value=pad)
    with pytest.raises(PadValueError, match=words):
        graphcert.verify_step(step, "4,8", samples=2)


def test_the_cli_says_a_pad_value_that_does_not_fit_in_one_line(tmp_path: Path) -> None:
    user = tmp_path / "padded.py"
    user.write_text(f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
                    "import graphcert, _fakestep as fake\n"
                    "BAD = graphcert.step(fake.rowwise, fake.make_inputs, framework='synthetic',"
                    " pad_value=(0.0, -1))\n")
    from graphcert.cli import cli

    done = CliRunner().invoke(cli, ["verify", f"{user}:BAD", "--classes", "4",
                                    "--samples", "2", "--no-certificate"])
    assert done.exit_code not in (0, 1), done.output
    assert "pad_value has 2 value(s) but make_inputs returns 1 input(s)" in done.output
    assert "Traceback" not in done.output


def test_pad_helpers() -> None:
    assert resolve(0.5, 3, "pad_value", 0.0) == (0.5, 0.5, 0.5)
    assert resolve({2: -1}, 3, "pad_value", 0.0) == (0.0, 0.0, -1)
    assert resolve(None, 2, "poison", None) == (None, None)
    assert recorded(0.0, None) == 0.0 and recorded({2: 7}, None) == [0.0, 0.0, 7]
    assert recorded((1, 2), 2) == [1, 2]
    assert describe((0.0, 0.0)) == "0" and describe((float("nan"), None, -1)) == \
        "[NaN, copies of the real rows, -1]"


@given(rows=st.integers(1, 12), n=st.integers(1, 12), fill=st.none() | st.integers(-5, 5))
def test_fill_rows_repeats_the_real_rows_or_fills(rows: int, n: int, fill: int | None) -> None:
    n = min(n, rows)
    a = np.arange(rows * 2, dtype=np.int64).reshape(rows, 2)
    real = a[:n].copy()
    fill_rows(a, n, fill)
    assert (a[:n] == real).all()
    for i in range(n, rows):
        assert (a[i] == (real[(i - n) % n] if fill is None else fill)).all()


def test_a_step_with_the_default_pad_records_one_number() -> None:
    result = graphcert.verify_step(fake.SAFE, "4", samples=2)
    assert result.settings is not None and result.settings.to_json()["pad_value"] == 0.0



def test_the_pointer_check_reads_the_pointers_recorded_at_capture(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Synthetic snapshot: verify's default moved-memory check (run.step_causes.PointerCheck)
    asks nothing of the driver until a bucket's snapshot with recorded pointers is set, then
    names the first dangling one's node and parameter."""
    from graphcert.model import NodeKind, snapshot_from_raw
    from graphcert.model.params import DanglingPointer
    from graphcert.model.snapshot import RawGraph, RawNode
    from graphcert.run import step_causes

    check = step_causes.PointerCheck()
    asked: list[object] = []
    monkeypatch.setattr(step_causes, "dangling_pointers_in",
                        lambda snap: asked.append(snap) or (DanglingPointer(
                            0, "0", "k_synthetic", 1, 0x7F0000100010, "freed"),))
    assert check(object()) is None and asked == []  # nothing read yet
    bare = {"name": "k_synthetic", "grid": [1, 1, 1], "block": [1, 1, 1],
            "shared_mem_bytes": 0, "param_sizes": [8, 8]}
    check.snapshot = snapshot_from_raw(RawGraph((RawNode(0, NodeKind.KERNEL, bare),), ()))
    assert check(object()) is None and asked == []  # no pointer recorded: nothing to ask
    pointed = {**bare, "param_values": [7, 0x7F0000100010], "param_pointers": [[1, 16, 4096]]}
    check.snapshot = snapshot_from_raw(RawGraph((RawNode(0, NodeKind.KERNEL, pointed),), ()))
    assert check(object()) == (0, 1) and asked == [check.snapshot]


def test_a_dangling_pointer_fails_a_sample_before_its_replay_even_of_a_safe_step() -> None:
    """A replay that reads freed memory may still match by luck: the pointer check runs
    before every replay, so a safe step (synthetic) whose pointer moved still fails."""
    adapter = fake.FakeAdapter()
    verifier = StepVerifier(fake.SAFE, "rowwise", adapter, 3, 0,
                            moved_memory=lambda captured: (2, 0))
    cls = verifier.verify_bucket(8, 4)
    assert isinstance(cls, ClassResult) and not cls.passed
    assert _causes(cls) == {Cause.MOVED_MEMORY}
    assert "kernel node 2 parameter 0" in cls.reasons[0]
