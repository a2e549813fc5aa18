"""bench review fixes on CPU (synthetic results, GPU parts replaced by fakes): exit status,
--context both verdict, child timeout, Harness clean-up and settling once, an unreadable SM
clock, the sweep plot drawn by the command alone."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from _certfactory import bench_results
from click.testing import CliRunner

from graphcert.cert.results.verdict import Status, Verdict
from graphcert.cli import cli
from graphcert.errors import GraphcertError
from graphcert.kinds.bench.result import BenchResult, SizeResult
from graphcert.options import Options
from graphcert.run import fresh, harness, jobs, worker
from graphcert.run.bench import throttle_check
from graphcert.run.harness import SETTLE_LAUNCHES, BenchSettings, Harness


def synthetic(throttled: bool = False) -> BenchResult:
    """A synthetic bench result (no GPU recorded it)."""
    doc = bench_results((256,), throttled=throttled)
    return BenchResult.from_json(doc)


@pytest.mark.parametrize(("throttled", "code"), [(True, 1), (False, 0)])
def test_bench_exits_1_on_a_failed_verdict(monkeypatch: pytest.MonkeyPatch, throttled: bool,
                                           code: int) -> None:
    result = synthetic(throttled)
    assert result.verdict.status is (Status.FAIL if throttled else Status.PASS)
    monkeypatch.setattr(jobs, "bench_workloads", lambda *a, **kw: [
        jobs.Certified("chain", result)])
    out = CliRunner().invoke(cli, ["bench", "chain", "--no-certificate", "--json"])
    assert out.exit_code == code, out.output


def test_the_fresh_child_option_is_gone() -> None:
    """A fresh-context child is a worker given a typed job (graphcert.run.fresh), no longer
    a hidden command-line flag."""
    out = CliRunner().invoke(cli, ["bench", "chain", "--fresh-child"])
    assert out.exit_code == 2 and "--fresh-child" in out.output


def test_both_contexts_verdict_keeps_a_failed_fresh_half() -> None:
    settled = synthetic()
    failed = synthetic(throttled=True)
    throttled = "n=256: SM clock dropped from 1980 to 1500 MHz (throttled)"
    both = jobs.with_other_context(settled, failed)
    assert both.other_context is failed
    assert both.verdict.status is Status.FAIL
    assert both.verdict.reasons == (f"fresh context: {throttled}",)
    unread = BenchResult.from_json({**bench_results((256,)), "sizes": [
        {k: v for k, v in bench_results((256,))["sizes"][0].items() if k != "clock_mhz"}]})
    assert unread.verdict.status is Status.INCOMPLETE
    worse = jobs.with_other_context(unread, failed)
    assert worse.verdict.status is Status.FAIL
    assert worse.verdict.reasons == (unread.verdict.reasons[0], f"fresh context: {throttled}")
    assert jobs.with_other_context(settled, synthetic()).verdict.passed


def test_stuck_fresh_child_is_stopped_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[float | None] = []
    made: list[subprocess.Popen[str]] = []
    real_wait = fresh.WorkerProcess.wait

    def wait(self: fresh.WorkerProcess, timeout: float | None = None) -> fresh.Finished:
        seen.append(timeout)
        made.append(self.proc)
        return real_wait(self, 0.2)  # the synthetic child below never ends by itself

    # synthetic: a child that sleeps instead of benching
    monkeypatch.setattr(worker, "worker_command",
                        lambda: [sys.executable, "-c", "import time; time.sleep(60)"])
    monkeypatch.setattr(fresh.WorkerProcess, "wait", wait)
    settings = BenchSettings()
    with pytest.raises(GraphcertError) as exc:
        fresh.bench_fresh("chain", [256], settings, 0)
    assert seen == [fresh.child_timeout_s(settings, [256])]
    assert "did not finish" in str(exc.value) and "\n" not in str(exc.value)
    assert made[0].returncode == -9  # stopped and reaped, not left running
    # the bound grows with sizes and placements
    assert fresh.child_timeout_s(settings, [1, 2]) > seen[0] > 60
    assert fresh.child_timeout_s(replace(settings, placements=1), [1]) < seen[0]


class _Made:
    """A fake CUDA object that records being freed."""

    log: list[str] = []

    def __init__(self, *args: Any) -> None:
        self.name = type(self).__name__
        _Made.log.append(f"make {self.name}")

    def free(self) -> None:
        _Made.log.append(f"free {self.name}")

    def destroy(self) -> None:
        _Made.log.append(f"free {self.name}")

    def synchronize(self) -> None:
        pass


class FakeStream(_Made):
    pass


class FakeBlocker(_Made):
    pass


class FakeBuffer(_Made):
    pass


class FakeCtx:
    def __init__(self, fail_on: str | None = None, refusal: str | None = None):
        self.fail_on = fail_on
        self.refusal = refusal  # what renew() answers (None: renewed)
        self.generation = 0
        self.device = type("D", (), {"info": type("I", (), {"l2_bytes": 1 << 20})()})()

    def renew(self) -> str | None:
        _Made.log.append("renew")
        if self.refusal is None:
            self.generation += 1
        return self.refusal

    def kernel(self, source: str, name: str) -> Any:
        if name == self.fail_on:
            raise RuntimeError(f"cannot load {name}")
        return name


@pytest.fixture
def fake_cuda(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    _Made.log = []
    monkeypatch.setattr(harness, "Stream", FakeStream)
    monkeypatch.setattr(harness, "BlockingKernel", FakeBlocker)
    monkeypatch.setattr(harness, "DeviceBuffer", FakeBuffer)
    return _Made.log


def test_harness_frees_what_it_made_when_init_fails(fake_cuda: list[str]) -> None:
    with pytest.raises(RuntimeError, match="gc_clock_calibrate"):
        Harness(FakeCtx(fail_on="gc_clock_calibrate"), BenchSettings(settle=False))  # type: ignore[arg-type]
    assert fake_cuda == ["make FakeStream", "make FakeBlocker", "free FakeBlocker",
                         "free FakeStream"]


def test_harness_settles_a_context_once(fake_cuda: list[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    settles: list[int] = []
    monkeypatch.setattr(Harness, "_settle_context", lambda self: settles.append(1))
    ctx, other = FakeCtx(), FakeCtx()
    first = Harness(ctx, BenchSettings())  # type: ignore[arg-type]
    second = Harness(ctx, BenchSettings())  # type: ignore[arg-type]
    assert settles == [1]
    assert first.settled_launches == second.settled_launches == SETTLE_LAUNCHES
    Harness(other, BenchSettings())  # type: ignore[arg-type]
    assert settles == [1, 1]  # a new context is settled again
    assert Harness(FakeCtx(), BenchSettings(settle=False)).settled_launches == 0  # type: ignore[arg-type]


def test_renewing_frees_everything_first_and_settles_the_new_context(
        fake_cuda: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    settles: list[int] = []
    monkeypatch.setattr(Harness, "_settle_context", lambda self: settles.append(1))
    h = Harness(FakeCtx(), BenchSettings())  # type: ignore[arg-type]
    made = ["make FakeStream", "make FakeBlocker", "make FakeBuffer", "make FakeBuffer"]
    assert fake_cuda == made and settles == [1]
    assert h.renew_context() is None
    freed = ["free FakeBlocker", "free FakeBuffer", "free FakeBuffer", "free FakeStream"]
    assert fake_cuda == [*made, *freed, "renew", *made]
    assert settles == [1, 1]  # a new context starts in the single-stream state
    h.close()
    h.close()  # a second close frees nothing twice
    assert fake_cuda == [*made, *freed, "renew", *made, *freed]


def test_a_refused_renewal_keeps_the_settled_context(
        fake_cuda: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    settles: list[int] = []
    monkeypatch.setattr(Harness, "_settle_context", lambda self: settles.append(1))
    h = Harness(FakeCtx(refusal="synthetic: held"), BenchSettings())  # type: ignore[arg-type]
    assert h.renew_context() == "synthetic: held"
    assert settles == [1] and h.settled_launches == SETTLE_LAUNCHES


def test_an_unreadable_clock_is_never_a_pass() -> None:
    nan = float("nan")
    assert throttle_check(1500.0, 1400.0) == (True, {"before": 1500.0, "after": 1400.0})
    assert throttle_check(1500.0, 1490.0) == (False, {"before": 1500.0, "after": 1490.0})
    for before, after in ((1500.0, nan), (nan, 1500.0), (0.0, 1500.0)):
        assert throttle_check(before, after) == (False, None)
    row = synthetic().sizes[0]

    def judge(*rows: SizeResult) -> Verdict:
        return BenchResult.judge(rows, clock_unavailable=None, other_context=None)

    assert judge(replace(row, clock_mhz={"before": 1.0, "after": 1.0})).passed
    verdict = judge(replace(row, clock_mhz=None))
    assert verdict.status is Status.INCOMPLETE and "SM clock could not be read" in \
        verdict.reasons[0]
    assert judge(replace(row, clock_mhz=None, throttled=True)).status is Status.FAIL


def test_sweep_names_the_plot_and_draws_nothing(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    import graphcert.kinds.sweep.views as render_sweep

    def no_drawing(*a: Any) -> None:
        raise AssertionError("the run layer drew the plot")

    monkeypatch.setattr(render_sweep, "plot_sweep", no_drawing)
    monkeypatch.setattr(jobs.environment, "environment", lambda device, git: {})
    monkeypatch.setattr(jobs.environment, "gpu_label", lambda env, names=None: "TEST-GPU")
    monkeypatch.setattr(jobs.environment, "write_sweep",
                        lambda fit, out, loaded, env, key, uuid_names=None: out / "sweep.json")
    monkeypatch.setattr(jobs.importlib.util, "find_spec", lambda name: object())
    runs = [jobs.Certified(f"chain[kernels={k}]", synthetic()) for k in (1, 10)]
    fit, cert, plot = jobs.sweep("kernels", [1, 10], runs, base_ref="chain",
                                 out_dir=tmp_path, options=Options())
    assert cert == tmp_path / "sweep.json"
    assert plot is not None and plot.parent == tmp_path and fit.plot == plot.name
    assert not plot.exists()
    assert jobs.sweep("kernels", [1, 10], runs, options=Options())[1:] == (None, None)
