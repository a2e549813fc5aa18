"""The example traffic mixes (examples/traffic/, SYNTHETIC: written by make_mixes.py from seeded
distributions) load as graphcert plan reads them, have the shapes they are named for, and
are what their generator writes; the model check's pure parts (benchmarks/
plan_replay_check.py: the sample it draws, the bucket that serves a batch, the model over a
sample) on the CPU. Every timing here is synthetic."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from graphcert.plan.costs import CostCurve, CostPoint
from graphcert.plan.evaluate import evaluate
from graphcert.plan.traffic import Traffic, load_traffic

ROOT = Path(__file__).resolve().parents[3]
TRAFFIC = ROOT / "examples" / "traffic"


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def _share(traffic: Traffic, keep: object) -> float:
    return sum(c for s, c in zip(traffic.sizes, traffic.counts, strict=True)
               if keep(s)) / traffic.total  # type: ignore[operator]


@pytest.mark.parametrize("name", ["skewed", "wide"])
def test_each_mix_loads_and_says_it_is_synthetic(name: str) -> None:
    path = TRAFFIC / f"{name}.csv"
    first = path.read_text().splitlines()[0]
    assert first.startswith("# SYNTHETIC traffic") and "make_mixes.py" in first
    traffic = load_traffic(path)
    assert traffic.total == 100_000 and traffic.sizes[0] == 1


def test_the_skewed_mix_is_mostly_small_and_the_wide_one_spreads() -> None:
    skewed = load_traffic(TRAFFIC / "skewed.csv", max_size=64)  # the GPU test's --max-size
    wide = load_traffic(TRAFFIC / "wide.csv")
    assert skewed.largest <= 64 and _share(skewed, lambda s: s <= 8) > 0.5
    assert wide.largest == 256 and _share(wide, lambda s: s <= 8) < 0.1
    assert _share(wide, lambda s: s > 64) > 0.2 and len(wide.sizes) > 150


def test_the_generator_writes_the_committed_files(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    make = _module(TRAFFIC / "make_mixes.py")
    monkeypatch.setattr(make, "HERE", tmp_path)
    make.main()
    for name in ("skewed.csv", "wide.csv"):
        assert (tmp_path / name).read_bytes() == (TRAFFIC / name).read_bytes(), name


# ------------------------------------------------------------------------ the model check

@pytest.fixture(scope="module")
def check() -> ModuleType:
    return _module(ROOT / "benchmarks" / "plan_replay_check.py")


def test_the_sample_is_seeded_and_follows_the_traffic(check: ModuleType) -> None:
    traffic = Traffic.from_counts({1: 90, 7: 10})
    sample = check.sample_sizes(traffic, 2000, 5)
    assert sample == check.sample_sizes(traffic, 2000, 5) != check.sample_sizes(traffic, 2000, 6)
    assert set(sample) == {1, 7} and 0.85 < sample.count(1) / 2000 < 0.95


def test_each_batch_is_served_by_the_smallest_bucket_or_eager(check: ModuleType) -> None:
    assert [check.serving_bucket((2, 8), n) for n in (1, 2, 3, 8, 9)] == [2, 2, 8, 8, None]
    assert check.serving_bucket((), 1) is None


def test_the_model_over_a_sample_is_the_plans_figure_when_the_sample_is_the_traffic(
        check: ModuleType) -> None:
    # synthetic curve: replay grows with the bucket, eager with n
    curve = CostCurve(tuple(CostPoint(s, 1e-5 * (1 + s / 8), 2e-5 * (1 + s / 8), 0.01, 1 << 21)
                            for s in range(1, 17)))
    traffic = Traffic.from_counts({1: 3, 5: 2, 12: 1})
    row = evaluate((4, 8), traffic, curve)
    steps = [(n, check.serving_bucket(row.buckets, n), 0.0)
             for n, c in zip(traffic.sizes, traffic.counts, strict=True) for _ in range(c)]
    served = check.Served(row, steps)
    assert served.sample_model_s(curve) == pytest.approx(row.expected_s, rel=1e-12)
    timed = check.Served(row, [(n, b, 2.0 if b == 4 else 1.0) for n, b, _ in steps])
    assert timed.mean_s == pytest.approx(1.5) and timed.median_model_s() == pytest.approx(1.5)
    assert "within 5%" in check.ratio_line("plan", 1.0, 1.04)
    assert "OUTSIDE 5%" in check.ratio_line("plan", 1.0, 0.94)


class _HostEvent:
    """A synthetic stand-in for graphcert.cuda.stream.Event: the host clock at record."""

    def __init__(self) -> None:
        self.at = 0.0

    def record(self, stream: object) -> None:
        import time

        self.at = time.perf_counter()

    def elapsed_s(self, later: _HostEvent) -> float:
        return later.at - self.at

    def destroy(self) -> None:
        pass


@pytest.mark.parametrize("source", ["fresh", "certificate"])
def test_the_check_runs_end_to_end_on_the_synthetic_framework(
        check: ModuleType, synthetic_cli: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], source: str) -> None:
    """The whole check, of a plan made in-process or of a plan certificate, on the synthetic
    framework with the host clock for the device's (synthetic timings: this checks the
    plumbing, not the figures)."""
    import json

    import _certfactory
    from click.testing import CliRunner

    from graphcert.cli import cli
    from graphcert.cuda import stream as cuda_stream
    from graphcert.placements import Sampled
    from graphcert.run import environment, steps_bench
    from tests.steps.test_steps_cpu import HostClockHarness

    class Timer(HostClockHarness):
        stream = type("S", (), {"synchronize": lambda self: None})()

        def device_samples(self, enqueue, ops):  # type: ignore[no-untyped-def]
            import time

            from graphcert.cert.results.figures import Ended

            t0 = time.perf_counter()
            enqueue(self.stream)
            return Sampled([time.perf_counter() - t0], Ended.SAMPLE_CAP)

    def harness(adapter: object, settings: object, device: int) -> object:
        h = Timer()
        return h, h.close

    monkeypatch.setattr(steps_bench, "framework_harness", harness)
    monkeypatch.setattr(cuda_stream, "Event", _HostEvent)
    (synthetic_cli / "mystep.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "from _fakestep import SAFE\n")
    (synthetic_cli / "t.csv").write_text("size,count\n1,6\n3,3\n9,1\n")
    plan = ["--traffic", "t.csv"]
    if source == "certificate":
        monkeypatch.setattr(environment, "environment",
                            lambda device, git: _certfactory.environment())
        made = CliRunner().invoke(cli, ["plan", "mystep.py:SAFE", *plan, "--out", "r"])
        assert made.exit_code in (0, 1), made.output
        (cert,) = (synthetic_cli / "r").glob("plan-*.json")
        plan = ["--certificate", str(cert)]
    monkeypatch.setattr(sys, "argv", ["check", *plan, "--step", "mystep.py:SAFE",
                                      "--steps", "30", "--json", "out.json"])
    status = check.main()
    doc = json.loads((synthetic_cli / "out.json").read_text())
    assert status == (0 if doc["passed"] else 1) and doc["steps"] == 30
    assert set(doc["lists"]) == {"plan", "vllm:9"}
    out = capsys.readouterr().out
    assert "model check:" in out and "plan / vllm:9" in out


def test_the_check_refuses_another_steps_certificate(check: ModuleType, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    cert = tmp_path / "plan.json"
    cert.write_text(json.dumps({"kind": "plan", "workload": {"ref": "x/other.py:S[traffic=a]"}}))
    monkeypatch.setattr(sys, "argv", ["check", "--certificate", str(cert)])
    with pytest.raises(SystemExit, match="plans x/other.py:S, not .*torch_decode.py:DECODE"):
        check.main()
