"""`graphcert plan` (issue 35) on the CPU: the synthetic framework step of tests/_fakestep.py,
timed by tests/steps/test_steps_cpu.py's HostClockHarness (the host clock around numpy calls: every
timing here is synthetic, nothing was measured on a GPU), with synthetic traffic files. The
certificate it writes is valid (schema and evidence) and gated; bad input is one line, exit 2,
nothing written."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner, Result

from graphcert.cert.document import validate_certificate
from graphcert.cert.evidence import contradictions
from graphcert.cert.schemas import load_schema
from graphcert.cli import cli
from graphcert.kinds.plan.result import PlanResult, traffic_digest
from graphcert.plan.costs import CostPoint
from graphcert.plan.traffic import Traffic
from graphcert.run.plan import FLAT, candidate_grid, first_round, thin_next, traffic_ref

TESTS = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS))
import _certfactory as certfactory  # noqa: E402
from _oneline import one_line  # noqa: E402

from tests.steps.test_steps_cpu import HostClockHarness  # noqa: E402

# Synthetic traffic: most batches small, a few up to 24.
SKEWED = {"1": 50, "2": 30, "3": 10, "8": 6, "24": 4}


def host_clock_harness(adapter: Any, settings: Any, device: int) -> Any:
    h = HostClockHarness()
    return h, h.close


@pytest.fixture()
def planner(synthetic_cli: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The synthetic step as a user file, the fake harness, the synthetic environment."""
    from graphcert.run import environment, steps_bench

    monkeypatch.setattr(environment, "environment",
                        lambda device, git: certfactory.environment())
    monkeypatch.setattr(steps_bench, "framework_harness", host_clock_harness)
    (synthetic_cli / "mystep.py").write_text(
        f"import sys\nsys.path.insert(0, {str(TESTS)!r})\nfrom _fakestep import SAFE\n")
    (synthetic_cli / "skewed.json").write_text(json.dumps(SKEWED))
    return synthetic_cli


def _plan(*args: str) -> Result:
    return CliRunner().invoke(cli, ["plan", "mystep.py:SAFE", "--traffic", "skewed.json",
                                    *args])


def test_plan_writes_a_valid_certificate_the_gate_passes(planner: Path) -> None:
    done = _plan("--current", "1,2,4,8,16,24", "--compare", "1,8,24", "--out", "r")
    assert done.exit_code == 0, done.output
    (path,) = (planner / "r").glob("*.json")
    doc = json.loads(path.read_text())
    assert validate_certificate(doc) == [] and contradictions(doc) == []
    jsonschema.Draft202012Validator(load_schema("plan")).validate(doc)
    digest = traffic_digest(Traffic.from_counts({int(k): v for k, v in SKEWED.items()}))
    assert doc["kind"] == "plan"
    assert doc["workload"]["ref"] == f"mystep.py:SAFE[traffic=sha256-{digest[:12]}]"
    assert doc["workload"]["options"] == {"traffic": f"sha256-{digest[:12]}"}
    result = PlanResult.from_json(doc["results"], doc["verdict"])
    assert [r.label for r in result.comparisons] == ["vllm:24", "sglang:24", "1,8,24",
                                                     "current"]
    assert result.budgets.max_size == 24  # the traffic's largest, by default
    # buckets are chosen among measured sizes only: the grid's ends and powers of two, and
    # every bucket of a compared list (so the presets are judged on measurements too)
    measured = {p.size for p in result.curve.points if p.measured}
    assert set(result.candidates) == measured
    assert set(first_round(result.curve.sizes)) <= measured
    assert {1, 2, 4, 8, 12, 16, 24} <= measured  # vllm:24, sglang:24, 1,8,24 and current
    # every traffic size is a candidate; one between two measured neighbours is measured only
    # where they differ by more than FLAT (the fake step's costs are real host timings, so
    # which gaps are flat varies from run to run): the finished curve has no steep gap left
    assert 3 in result.curve.sizes
    done_points = [p for p in result.curve.points if p.measured]
    assert thin_next(done_points, result.curve.sizes) == []
    assert all(p.measured == (p.size in measured) for p in result.curve.points)
    assert "end to end medians" in result.why  # the fake eager side has no queued figure
    # one word, one meaning: candidates are the buckets searched; the curve's other sizes
    # are interpolated, never called candidates
    assert f"{len(measured)} candidate(s)" in result.why
    assert f"{len(measured)} of {len(result.curve.sizes)} size(s) measured" in result.why
    # the synthetic eager call is host numpy, so the plan may be "no graph": either form
    lines = done.stdout.splitlines()
    assert lines[0] == doc["workload"]["ref"] and "vllm:24" in done.stdout
    assert any(ln.startswith("vLLM") for ln in lines)
    (planner / "g.toml").write_text("max_plan_regret = 1000.0\n")
    gated = CliRunner().invoke(cli, ["gate", "r", "--policy", "g.toml"])
    assert gated.exit_code == 0, gated.output
    assert "gate: PASS" in gated.stdout and "max_plan_regret" in gated.stdout


def test_two_traffic_mixes_of_one_step_write_two_certificates(planner: Path) -> None:
    (planner / "wide.csv").write_text("size,count\n1,5\n12,5\n24,5\n")
    assert _plan("--out", "r").exit_code == 0
    done = CliRunner().invoke(cli, ["plan", "mystep.py:SAFE", "--traffic", "wide.csv",
                                    "--out", "r"])
    assert done.exit_code == 0, done.output
    refs = {json.loads(p.read_text())["workload"]["ref"] for p in (planner / "r").glob("*")}
    assert len(refs) == 2


def test_json_and_no_certificate(planner: Path) -> None:
    done = _plan("--json", "--no-certificate", "--max-graphs", "2")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    assert doc["certificate"] is None and doc["verdict"]["passed"] is True
    assert len(doc["results"]["chosen"]["buckets"]) <= 2
    assert doc["results"]["budgets"]["max_graphs"] == 2
    assert not (planner / "reports").exists()


@pytest.mark.parametrize(("args", "traffic", "message"), [
    ((), '{"1": 0}', "count"),
    ((), "[]", "empty"),
    ((), "[1, 1.5]", "1.5"),
    (("--max-size", "8"), None, "above"),
    (("--capture-budget", "0"), None, "capture budget"),
    (("--compare", "1,64"), None, "above max_size"),
])
def test_bad_input_is_one_line_and_writes_nothing(planner: Path, args: tuple[str, ...],
                                                  traffic: str | None, message: str) -> None:
    if traffic is not None:
        (planner / "skewed.json").write_text(traffic)
    line = one_line(_plan(*args, "--out", "r"))
    assert message in line, line
    assert not (planner / "r").exists() or not any((planner / "r").iterdir())


def test_a_built_in_workload_is_refused(planner: Path) -> None:
    line = one_line(CliRunner().invoke(cli, ["plan", "chain", "--traffic", "skewed.json",
                                             "--out", "r"]))
    assert "graphcert plan measures framework steps" in line
    assert not (planner / "r").exists()


# ------------------------------------------------------------------ the grid and its thinning

def _point(size: int, replay: float) -> CostPoint:
    return CostPoint(size, replay, replay * 2, 0.01, 0)


def test_the_grid_holds_the_traffic_and_the_lists_within_max_size() -> None:
    traffic = Traffic.from_counts({3: 1, 7: 1})
    assert candidate_grid(traffic, 8, [("a", (1, 2, 4, 8, 16))]) == [1, 2, 3, 4, 7, 8]
    assert first_round([1, 3, 5, 6, 9]) == [1, 9]
    assert first_round([3, 4, 5, 6]) == [3, 4, 6]


def test_thinning_splits_steep_gaps_and_interpolates_flat_ones() -> None:
    candidates = [1, 2, 3, 4, 5, 6, 7, 8]
    flat = [_point(1, 1.0), _point(8, 1.0 + FLAT / 2)]
    assert thin_next(flat, candidates) == []
    steep = [_point(1, 1.0), _point(4, 1.0), _point(8, 2.0)]
    assert thin_next(steep, candidates) == [6]  # the middle of (4, 8): 5, 6, 7


def test_the_traffic_option_is_text_and_refused_twice() -> None:
    digits = Traffic.from_counts({1: 1})
    ref = traffic_ref("x.py:S[k=1]", digits)
    assert ref.startswith("x.py:S[k=1,traffic=sha256-")
    from graphcert.errors import InputError

    with pytest.raises(InputError, match="already has an option 'traffic'"):
        traffic_ref("x.py:S[traffic=a]", digits)


def test_thinning_with_a_limit_splits_the_steepest_gaps_first() -> None:
    candidates = list(range(1, 17))
    points = [_point(1, 1.0), _point(4, 1.2), _point(8, 3.0), _point(16, 3.3)]
    assert thin_next(points, candidates) == [3, 6, 12]  # steeper than FLAT: 17%, 60%, 9%
    assert thin_next(points, candidates, limit=1) == [6]  # 1.2 -> 3.0 is the steepest
    assert thin_next(points, candidates, limit=2) == [3, 6]
    assert thin_next(points, candidates, limit=0) == []


def test_measuring_stops_at_its_limit_and_says_so(planner: Path) -> None:
    """Synthetic timings that grow 50% with every figure taken, so every gap stays steep:
    no more sizes are measured than the limit allows, and the steep gaps left are named."""
    from _fakestep import SAFE

    from graphcert.cert.results.figures import Ended
    from graphcert.placements import Sampled
    from graphcert.run.harness import BenchSettings
    from graphcert.run.plan import measure_curve

    class Growing(HostClockHarness):
        taken = 0

        def measure_samples(self, enqueue, ops, weight=None, bare=None, known=None):  # type: ignore[no-untyped-def]
            enqueue(None)
            Growing.taken += 1
            value = 1e-6 * 1.5 ** Growing.taken
            return {q: Sampled([value] * 12, Ended.PRECISION_TARGET)
                    for q in ("host_enqueue", "end_to_end", "device", "hot_device")}

    def growing(adapter: Any, settings: Any, device: int) -> Any:
        h = Growing()
        return h, h.close

    grid = list(range(1, 25))
    curve, how = measure_curve(SAFE, "mystep.py:SAFE", grid, BenchSettings(),
                               open_harness=growing, max_measured=len(first_round(grid)) + 1)
    assert curve.sizes == tuple(grid)
    measured = [p for p in curve.points if p.measured]
    assert len(measured) == len(first_round(grid)) + 1
    assert set(first_round(grid)) < {p.size for p in measured}
    assert how.startswith("queued device medians")
    left = len(thin_next(measured, grid))
    assert left and f"measuring stopped at 7 sizes, the most a plan measures: {left} gap(s)" \
        in how, how
