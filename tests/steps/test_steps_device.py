"""Framework steps on the CPU (the synthetic framework of tests/_fakestep.py): the optional
device comparison (trusted only when it says "all close"; the host path words every failure),
the phases a bucket is charged with (release; one graph-memory read per bucket, the first
in the one-time set-up), and --device reaching the step's adapter. The real frameworks'
comparison is tested in tests/gpu/test_steps_compare_gpu.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import graphcert
from graphcert.cert.results.verdict import Status
from graphcert.frameworks.adapters import adapter_for, device_compare
from graphcert.kinds.topology.result import ClassResult
from graphcert.run.steps import FRAMEWORK_PHASES, StepVerifier, verify_step

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
import _fakestep as fake  # noqa: E402


@pytest.fixture(autouse=True)
def rows_on_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests compare on the "device" whatever the rows' size (the synthetic rows are
    small, and small rows go to the host by default: see the last test)."""
    from graphcert.frameworks import compare

    monkeypatch.setattr(compare, "DEVICE_COMPARE_MIN_BYTES", 0)


def _on_device(step: graphcert.Step) -> graphcert.Step:
    """The same step over the synthetic framework that compares "on the device"."""
    from dataclasses import replace

    return replace(step, framework=fake.FRAMEWORK_DEVICE)


def test_only_adapters_with_both_methods_compare_on_the_device() -> None:
    assert device_compare(fake.FakeAdapter()) is None
    adapter = fake.DeviceCompareFake()
    assert device_compare(adapter) is adapter


def test_a_matching_sample_copies_nothing_to_the_host() -> None:
    adapter = fake.DeviceCompareFake()
    result = verify_step(_on_device(fake.SAFE), "safe", graphcert_buckets("4,8"), samples=3,
                         adapter=adapter)
    assert result.verdict.status is Status.PASS, result.verdict.reasons
    assert adapter.verdicts == [True] * 6
    assert adapter.host_copies == 0


def test_a_device_mismatch_is_worded_by_the_host_path_exactly_as_before() -> None:
    host = graphcert.verify_step(fake.UNSAFE, "4,8", samples=4)
    adapter = fake.DeviceCompareFake()
    device = verify_step(_on_device(fake.UNSAFE), "batch_mean", graphcert_buckets("4,8"),
                         samples=4, adapter=adapter, classes_spec="4,8")
    assert device.verdict.status is Status.FAIL
    assert [c.reasons for c in device.classes] == [c.reasons for c in host.classes]
    assert False in adapter.verdicts and adapter.host_copies > 0
    # only the failing samples were copied: two rows (graph, eager) per output each, and
    # finding the cause (padding) read its input's dtype and the rows of two more replays
    assert adapter.host_copies == (2 + 1 + 2) * adapter.verdicts.count(False)


@pytest.mark.parametrize("say", [None, False])
def test_a_device_that_cannot_say_or_disagrees_leaves_the_verdict_to_the_host(
        say: bool | None) -> None:
    adapter = fake.DeviceCompareFake(say=say)
    result = verify_step(_on_device(fake.SAFE), "safe", graphcert_buckets("4"), samples=2,
                         adapter=adapter)
    assert result.verdict.status is Status.PASS, result.verdict.reasons
    assert adapter.verdicts == [say, say] and adapter.host_copies == 4


def test_a_custom_rows_function_never_compares_on_the_device() -> None:
    step = graphcert.step(fake.rowwise, fake.make_inputs, framework=fake.FRAMEWORK_DEVICE,
                          rows=lambda out, n: out[:n, :1], name="first_column")
    adapter = fake.DeviceCompareFake()
    result = verify_step(step, "first_column", graphcert_buckets("4"), samples=2,
                         adapter=adapter)
    assert result.verdict.status is Status.PASS
    assert adapter.verdicts == [] and adapter.host_copies == 4


def test_release_is_the_frameworks_and_memory_is_read_once_per_bucket() -> None:
    adapter = fake.FakeAdapter()
    verifier = StepVerifier(fake.SAFE, "safe", adapter, 2, 0)
    verifier.prepare()
    assert adapter.memory_reads == 1  # the first read's one-time cost, in "setup"
    for capacity in (4, 8, 16):
        verifier.verify_bucket(capacity, None)
    assert adapter.memory_reads == 1 + 3
    assert "release" in FRAMEWORK_PHASES and "release" in verifier.phases.seconds
    assert {"setup", "memory", "compare"} <= set(verifier.phases.seconds)


def test_adapter_factories_take_the_device() -> None:
    assert adapter_for(fake.FRAMEWORK, 3).device == 3  # type: ignore[attr-defined]
    assert adapter_for(fake.FRAMEWORK).device == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", ["verify", "bench", "capture"])
def test_device_reaches_the_steps_adapter_and_the_harness_from_the_cli(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graphcert.cli import cli
    from graphcert.run import steps_bench
    from tests.steps.test_steps_cpu import HostClockHarness

    harness_devices: list[int] = []

    def host_clock_harness(adapter: object, settings: object, device: int) -> object:
        harness_devices.append(device)
        h = HostClockHarness()
        return h, h.close

    monkeypatch.setattr(steps_bench, "framework_harness", host_clock_harness)

    user = tmp_path / "mystep.py"
    user.write_text(f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
                    "from _fakestep import SAFE\n")
    extra = {"verify": ["--samples", "2", "--no-certificate"],
             "bench": ["--max-noise", "1.0", "--min-samples", "3", "--min-time", "0",
                       "--timeout", "0.1", "--no-certificate"],
             "capture": ["--out", str(tmp_path / "shots")]}[command]
    before = len(fake.FakeAdapter.made)
    done = CliRunner().invoke(cli, [command, f"{user}:SAFE", "--classes", "4",
                                    "--device", "2", *extra])
    assert done.exit_code == 0, done.output
    made = fake.FakeAdapter.made[before:]
    assert made and {a.device for a in made} == {2}
    assert harness_devices == ([2] if command == "bench" else [])


def graphcert_buckets(text: str) -> object:
    from graphcert.buckets import parse_buckets

    return parse_buckets(text)


def test_bucket_facts_survive_the_device_path() -> None:
    result = verify_step(_on_device(fake.SAFE), "safe", graphcert_buckets("4"), samples=2,
                         adapter=fake.DeviceCompareFake())
    (cls,) = result.classes
    assert isinstance(cls, ClassResult) and cls.bucket is not None
    assert cls.bucket.framework == fake.FRAMEWORK_DEVICE and cls.bucket.graph_memory == {}


def test_a_device_comparison_that_raises_leaves_the_verdict_to_the_host() -> None:
    class Raising(fake.DeviceCompareFake):
        def all_close(self, *args: object, **kw: object) -> bool | None:
            raise TypeError("synthetic: no float64 for this dtype")

    adapter = Raising()
    result = verify_step(_on_device(fake.UNSAFE), "batch_mean", graphcert_buckets("4"),
                         samples=2, adapter=adapter)
    assert result.verdict.status is Status.FAIL
    assert "output 0 row 0 differs" in result.classes[0].reasons[0]
    assert "raised" not in result.classes[0].reasons[0]


def test_small_rows_are_compared_on_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphcert.frameworks import compare

    monkeypatch.setattr(compare, "DEVICE_COMPARE_MIN_BYTES", 8 << 20)
    adapter = fake.DeviceCompareFake()
    result = verify_step(_on_device(fake.SAFE), "safe", graphcert_buckets("4"), samples=2,
                         adapter=adapter)
    assert result.verdict.status is Status.PASS
    assert adapter.verdicts == [] and adapter.host_copies == 4
    # rows at the threshold go to the device
    monkeypatch.setattr(compare, "DEVICE_COMPARE_MIN_BYTES", 1)
    adapter = fake.DeviceCompareFake()
    verify_step(_on_device(fake.SAFE), "safe", graphcert_buckets("4"), samples=2,
                adapter=adapter)
    assert adapter.verdicts == [True, True] and adapter.host_copies == 0


def test_the_host_fast_path_agrees_with_numpys_isclose() -> None:
    """first_mismatch's cheap check may only ever say "all close" where np.isclose does:
    tolerance edges, infinities (5 against inf passes |x - y| <= rtol * inf), NaN."""
    import numpy as np

    from graphcert.frameworks.compare import first_mismatch

    rng = np.random.default_rng(11)
    want = rng.standard_normal((32, 4))
    allowed = 1e-3 + 1e-3 * np.abs(want)
    cases = [(want, want), (want + allowed * 0.999, want), (want + allowed * 1.001, want),
             (np.array([[5.0]]), np.array([[np.inf]])), (np.array([[np.inf]]),) * 2,
             (np.array([[-np.inf]]), np.array([[np.inf]])), (np.array([[np.nan]]),) * 2,
             (np.array([[1.0]]), np.array([[np.nan]]))]
    for got, ref in cases:
        for dtype in (np.float64, np.float32, np.float16):
            g, w = got.astype(dtype), ref.astype(dtype)
            close = np.isclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-3,
                               atol=1e-3, equal_nan=True).all()
            assert (first_mismatch([g], [w], 1e-3, 1e-3) is None) == close, (got, ref, dtype)


def test_the_float16_fast_path_never_passes_what_numpy_fails() -> None:
    """Random float16 pairs packed at the tolerance edge (synthetic): the float32 check may
    send a close pair on to np.isclose but must never pass one np.isclose fails."""
    import numpy as np

    from graphcert.frameworks.compare import _all_close_finite

    rng = np.random.default_rng(12)
    for rtol, atol in ((1e-3, 1e-3), (1e-2, 0.0), (0.0, 1e-4), (0.0, 0.0)):
        w = (rng.standard_normal(4000) * 10.0 ** rng.integers(-6, 4, 4000)).astype(np.float16)
        step = (atol + rtol * np.abs(w.astype(np.float64))) * rng.uniform(0.9, 1.1, w.size)
        g = (w.astype(np.float64) + step * rng.choice([-1.0, 1.0], w.size)).astype(np.float16)
        close = np.isclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol)
        fast = np.array([_all_close_finite(g[i:i + 1], w[i:i + 1], rtol, atol)
                         for i in range(w.size)])  # each element's verdict on its own
        assert not (fast & ~close).any(), (rtol, atol, np.flatnonzero(fast & ~close)[:5])
        assert fast.sum() >= 0.9 * close.sum()  # and it passes nearly all of the close ones
        assert _all_close_finite(w, w.copy(), rtol, atol)  # equal rows pass


@pytest.mark.filterwarnings("ignore:One of rtol or atol is not valid")  # numpy's, on NaN/inf
@pytest.mark.parametrize("rtol, atol, got, want", [
    (float("nan"), 1e-3, 1.0, 1.0009765625), (float("inf"), 1e-3, 1e-4, 0.0),
    (1e-3, float("inf"), 1.0, float("inf")), (1e-3, 1e39, 1.0, float("inf")),
    (0.0, 1e39, float("inf"), float("-inf")), (1e35, 1e-3, float("inf"), 65504.0),
])
def test_float16_rows_with_extreme_tolerances_get_numpys_verdict(rtol: float, atol: float,
                                                                 got: float,
                                                                 want: float) -> None:
    """Tolerances a float32 test cannot hold (NaN, infinite, or overflowing it against
    float16's largest value): found by a review of the float32 paths; first_mismatch takes
    numpy's float64 formula for them (first_mismatch is public; graphcert.step refuses them)."""
    import numpy as np

    from graphcert.frameworks.compare import first_mismatch

    g, w = np.array([[got]], np.float16), np.array([[want]], np.float16)
    with np.errstate(invalid="ignore", over="ignore"):
        close = bool(np.isclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol,
                                atol=atol, equal_nan=True).all())
    assert (first_mismatch([g], [w], rtol, atol) is None) == close


def test_the_float16_table_gives_numpys_float32_for_every_bit_pattern() -> None:
    import numpy as np

    from graphcert.frameworks.compare import _float32_of

    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16)  # NaNs and infinities too
    got, want = _float32_of(every), every.astype(np.float32)
    assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert got.flags.writeable  # a fresh array: callers subtract into it
    rows = every.reshape(256, 256)[:, ::3]  # a strided view, as a row slice can be
    assert np.array_equal(_float32_of(rows).view(np.uint32),
                          rows.astype(np.float32).view(np.uint32))  # same shape, same bits


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "bool"])
def test_only_differing_bits_are_compared_and_the_verdict_is_numpys(dtype: str) -> None:
    """first_mismatch compares by value only the elements whose bits differ (synthetic
    rows): its verdict and the row it names must be numpy's isclose (equal_nan) over the
    whole rows, whether few elements differ (the picked-out path) or most do."""
    import numpy as np

    from graphcert.frameworks.compare import first_mismatch

    rng = np.random.default_rng(13)
    for trial in range(200):
        want = (rng.standard_normal((9, 5)) * 4).astype(dtype)
        got = want.copy()
        share = rng.choice([0.0, 0.05, 0.5, 1.0])
        hit = rng.random(want.shape) < share
        if dtype == "bool":
            got[hit] = ~got[hit]
        elif dtype == "int32":
            got[hit] += rng.integers(-1, 2, int(hit.sum())).astype(dtype)
        else:
            noise = rng.choice([1e-4, 1e-3, 1e-1, np.nan, np.inf], int(hit.sum()))
            got[hit] = (got[hit].astype(np.float64) * (1 + noise)).astype(dtype)
            if trial % 7 == 0:
                want[0, 0] = got[0, 0] = np.nan  # equal bits: close under equal_nan
        bad = ~np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3,
                          atol=1e-3, equal_nan=True)
        said = first_mismatch([got], [want], 1e-3, 1e-3)
        if not bad.any():
            assert said is None, (trial, said)
        else:
            row = int(np.argmax(bad.any(axis=1)))
            assert said is not None and f"output 0 row {row} differs" in said, (trial, said)
