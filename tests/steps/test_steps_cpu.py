"""Framework steps on the CPU, over a synthetic framework (tests/_fakestep.py): capture per
bucket, padded replay against the eager call, typed results and certificates, loading by
reference, bad input. The real frameworks are tested in tests/gpu/test_steps_gpu.py."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import graphcert
from graphcert.cert.document import certificate_of, validate_certificate
from graphcert.cert.results.verdict import Status
from graphcert.errors import FrameworkMissing, InputError
from graphcert.frameworks.adapters import adapter_for
from graphcert.frameworks.compare import first_mismatch
from graphcert.frameworks.step import is_step
from graphcert.kinds.topology.result import ClassResult, VerifyResult
from graphcert.run.steps_bench import bench_step
from graphcert.stats import StopRule
from graphcert.workloads.registry import load

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
import _certfactory as certfactory  # noqa: E402
import _fakestep as fake  # noqa: E402


def test_safe_step_passes_every_bucket_with_its_facts() -> None:
    result = graphcert.verify_step(fake.SAFE, "1,2,4,8,16,24", samples=3)
    assert result.verdict.status is Status.PASS, result.verdict.reasons
    assert [c.capacity for c in result.classes] == [1, 2, 4, 8, 16, 24]
    last = result.classes[-1]
    assert isinstance(last, ClassResult) and last.bucket is not None
    assert last.bucket.framework == "synthetic"
    assert last.padding_waste == {"min": 0, "max": 24 - 17}
    assert all(s.output_equal for s in last.samples) and len(last.samples) == 3
    key = last.bucket.cache_key
    assert key is not None and key["bucket"] == 24 and key["topology_hash"] == last.topology_hash
    assert len(key["key"]) == 64 and key["node_layout_version"] >= 2
    # the synthetic gemm changes kernel above 8, as cuBLAS does per batch size
    changes = {(t.frm, t.to): t.change for t in result.transitions}
    assert changes[(8, 16)] == "topology" and changes[(1, 2)] == "parameters only"
    assert {"capture", "snapshot", "replay", "eager", "pad", "compare"} <= set(result.timings_s)


def test_cache_keys_differ_by_bucket_and_topology() -> None:
    result = graphcert.verify_step(fake.SAFE, "4,8,16", samples=2)
    keys = [c.bucket.cache_key["key"] for c in result.classes
            if isinstance(c, ClassResult) and c.bucket and c.bucket.cache_key]
    assert len(set(keys)) == 3


def test_unsafe_step_fails_naming_bucket_size_and_row() -> None:
    result = graphcert.verify_step(fake.UNSAFE, "4,8", samples=4)
    assert result.verdict.status is Status.FAIL
    cls = result.classes[1]  # bucket 8 holds 5..8
    why = cls.reasons[0]
    assert why.startswith("step batch_mean, bucket 8, n=5: output 0 row 0 differs"), why
    assert "3 padded rows" in why and "reduction over the whole padded batch" in why
    assert [s.n for s in cls.samples if s.output_equal is False] == [5, 6, 7]
    assert cls.samples[-1].n == 8 and cls.samples[-1].output_equal is True  # nothing padded
    assert "2 more sampled size(s) of bucket 8" in cls.reasons[-1]


def test_a_step_that_synchronises_in_capture_is_one_line_with_the_fix() -> None:
    result = graphcert.verify_step(fake.SYNCING, "4,8", samples=2)
    assert result.verdict.status is Status.FAIL
    for cls, bucket in zip(result.classes, (4, 8), strict=True):
        (why,) = cls.reasons
        assert why.startswith(f"step syncs, bucket {bucket}: synthetic could not capture it")
        assert "keep host syncs out of the step" in why and "\n" not in why


def test_certificate_of_a_step_validates_and_reads_back() -> None:
    result = graphcert.verify_step(fake.SAFE, "vllm:16", samples=2)
    cert = certificate_of(result, workload=certfactory.workload("x.py:SAFE", "rowwise"),
                          environment=certfactory.environment())
    assert validate_certificate(cert) == []
    back = VerifyResult.from_json(cert["results"], cert["verdict"])
    assert back.to_json() == result.to_json()
    first = back.classes[0]
    assert isinstance(first, ClassResult) and first.bucket == result.classes[0].bucket


def test_first_mismatch_names_output_row_and_shape() -> None:
    a = np.zeros((4, 2), np.float32)
    b = a.copy()
    b[2, 1] = 1.0
    assert first_mismatch([a], [a.copy()], 0, 0) is None
    assert "output 0 row 2 differs" in (first_mismatch([b], [a], 1e-3, 1e-3) or "")
    assert "shape (4, 2) from the graph but (3, 2)" in (first_mismatch([a], [a[:3]], 0, 0) or "")
    assert "1 outputs, the eager call 2" in (first_mismatch([a], [a, a], 0, 0) or "")
    ints = np.arange(3)
    assert "row 1" in (first_mismatch([ints], [np.array([0, 5, 2])], 0, 0) or "")


class HostClockHarness:
    """A stand-in for graphcert's harness on the CPU: each enqueue timed with the host clock
    (the synthetic framework runs on the host); the device figure of the eager side is
    Unavailable, as a step that waits on the host inside its call makes it on a GPU."""

    def __init__(self) -> None:
        self.enqueued: list[int] = []
        self.known: list[dict[str, object]] = []  # what each call was told is unavailable
        self.closed = False

    def measure_samples(self, enqueue, ops, weight=None, bare=None, known=None):  # type: ignore[no-untyped-def]
        import time

        from graphcert.cert.results.figures import Ended, Unavailable
        from graphcert.placements import Sampled

        def timed() -> float:
            t0 = time.perf_counter()
            enqueue(None)
            return time.perf_counter() - t0

        def loop() -> Sampled:
            return Sampled([timed() for _ in range(12)], Ended.PRECISION_TARGET)

        self.enqueued.append(ops)
        self.known.append(dict(known or {}))
        eager = weight is None
        device = (known or {}).get("device") or (
            Unavailable("held to its timeout") if eager else loop())
        return {"host_enqueue": loop(), "end_to_end": loop(), "device": device,
                "hot_device": loop()}

    def hot_batch(self, weight: int) -> int:
        return 4

    def clock_mhz(self) -> float:
        return 1980.0

    def close(self) -> None:
        self.closed = True


def test_bench_step_times_replay_against_eager_with_the_harness() -> None:
    from graphcert.run.harness import BenchSettings

    fakes: list[HostClockHarness] = []

    def open_fake(adapter, settings, device):  # type: ignore[no-untyped-def]
        assert adapter.stream_address() == 0 and settings.rule.max_noise == 1.0
        fakes.append(HostClockHarness())
        return fakes[-1], fakes[-1].close

    rule = StopRule(max_noise=1.0, min_samples=3, min_time_s=0.0, timeout_s=0.5)
    result = bench_step(fake.SAFE, "rowwise", graphcert_buckets("4,8"), BenchSettings(rule),
                        open_harness=open_fake)
    assert [s.capacity for s in result.sizes] == [4, 8]
    assert fakes[0].closed and result.wall_s is not None and result.wall_s > 0
    assert result.clock == {"before_mhz": 1980.0, "after_mhz": 1980.0}
    for size in result.sizes:
        assert size.stream_path == "eager" and size.graph.end_to_end.samples == 12
        assert size.clock_mhz == {"before": 1980.0, "after": 1980.0} and not size.throttled
        assert getattr(size.stream.device, "reason", None) == "held to its timeout"
        assert size.graph.get("device") is not None and size.hot is not None
        assert size.speedup["end_to_end"] is not None and size.speedup["device"] is None
    assert result.verdict.status is Status.PASS  # the clock was read: no incomplete verdict
    # the eager call's device figure, unavailable at the first bucket, is not held again
    from graphcert.cert.results.figures import Unavailable

    assert fakes[0].known == [{}, {}, {"device": Unavailable("held to its timeout")}, {}]
    assert result.settings["timing"] == "graphcert's harness on the framework's stream"


def graphcert_buckets(text: str) -> object:
    from graphcert.buckets import parse_buckets

    return parse_buckets(text)


def test_steps_load_by_reference_and_verify_from_the_cli(tmp_path: Path) -> None:
    user = tmp_path / "mystep.py"
    user.write_text(f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
                    "from _fakestep import SAFE, UNSAFE\n")
    assert is_step(load(f"{user}:SAFE").target)
    from graphcert.cli import cli

    ok = CliRunner().invoke(cli, ["verify", f"{user}:SAFE", "--classes", "4,8",
                                  "--samples", "2", "--no-certificate"])
    assert ok.exit_code == 0, ok.output
    bad = CliRunner().invoke(cli, ["verify", f"{user}:UNSAFE", "--classes", "4",
                                   "--samples", "2", "--no-certificate"])
    assert bad.exit_code == 1 and "bucket 4, n=1: output 0 row 0" in " ".join(bad.output.split())


def test_a_step_failing_every_bucket_is_one_progress_line_and_a_count(tmp_path: Path) -> None:
    """Piped, a step that fails alike in every bucket prints its first failing class and a
    count, then the verdict's grouped reasons: not one line per bucket."""
    user = tmp_path / "mystep.py"
    user.write_text(f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
                    "from _fakestep import SYNCING\n")
    from graphcert.cli import cli

    bad = CliRunner().invoke(cli, ["verify", f"{user}:SYNCING", "--classes", "1,2,4,8,16",
                                   "--samples", "2", "--no-certificate"])
    assert bad.exit_code == 1, bad.output
    lines = [ln for ln in bad.stderr.splitlines() if ":SYNCING: " in ln]
    assert lines[:2] == [f"{user}:SYNCING: class 1 fail", f"{user}:SYNCING: 4 more classes fail"]
    assert not any(": class 2 fail" in ln for ln in lines)


def test_declaration_refuses_bad_input() -> None:
    with pytest.raises(InputError, match="framework 'jax'"):
        graphcert.step(fake.rowwise, fake.make_inputs, framework="jax")
    with pytest.raises(InputError, match="make_inputs"):
        graphcert.step(fake.rowwise, 3)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=">= 0"):
        graphcert.step(fake.rowwise, fake.make_inputs, framework="synthetic", rtol=-1)
    for bad_tolerance in ({"rtol": float("nan")}, {"atol": float("inf")}):
        with pytest.raises(InputError, match="finite numbers >= 0"):
            graphcert.step(fake.rowwise, fake.make_inputs, framework="synthetic",
                           **bad_tolerance)


@pytest.mark.parametrize("framework", ["torch", "cupy", "cuda.core"])
def test_a_missing_framework_is_a_reason(framework: str) -> None:
    try:
        adapter_for(framework)
    except FrameworkMissing as exc:
        assert "\n" not in exc.one_line() and exc.hint
    except Exception as exc:  # installed but unusable here must still be FrameworkMissing
        pytest.fail(f"{framework}: {type(exc).__name__}: {exc}")
    else:
        pytest.skip(f"{framework} is installed with a device here")


def test_overhead_benchmark_prints_its_figures() -> None:
    import subprocess

    done = subprocess.run([sys.executable, str(TESTS.parent / "benchmarks/steps_overhead.py"),
                           "--synthetic", "--classes", "4,8", "--samples", "2"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("rowwise (synthetic) over 4,8: 2 buckets")
    assert lines[-1].startswith("verify wall ") and "0 bucket(s) failed" in lines[-1]


def test_compare_split_times_the_comparison_in_place() -> None:
    """benchmarks/compare_split.py --synthetic: every wrapped piece was reached and timed,
    and none costs more per sample than the compare phase holding it."""
    import subprocess

    done = subprocess.run([sys.executable, str(TESTS.parent / "benchmarks/compare_split.py"),
                           "--synthetic"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "in place, synthetic:SAFE over vllm:136 (80 samples), µs per sample:"
    figures = {ln[:44].strip(): float(ln[44:]) for ln in lines[1:]}
    assert set(figures) == {"compare phase (verify)", "keep (eager rows)",
                            "mismatch (graph rows)", "first_mismatch (numpy)",
                            "to_numpy (host copies)", "head (views)"}
    assert all(v > 0 for v in figures.values()), figures
    phase = figures["compare phase (verify)"]
    assert figures["keep (eager rows)"] + figures["mismatch (graph rows)"] <= phase * 1.01
