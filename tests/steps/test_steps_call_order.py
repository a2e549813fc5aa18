"""What verify calls of a framework step, and in what order: the sequence docs/python-api.md
("What verify calls, and in what order") promises a step with state. Over the synthetic
framework of tests/_fakestep.py, whose capture warms up and captures as the real adapters do
(`warmup` eager calls on the static inputs, then one captured call); the order around them is
graphcert's own (graphcert/run/steps.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

import graphcert
from graphcert.frameworks.adapters import register_adapter
from graphcert.frameworks.step import Step

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _fakestep as fake  # noqa: E402

FRAMEWORK = "synthetic-logged"
LOG: list[str] = []
REPLAYING = {"now": False}


class LoggingAdapter(fake.FakeAdapter):
    """The synthetic framework, logging every replay (a replay recomputes the step here, so
    the step's own log is silenced while one runs)."""

    framework = FRAMEWORK

    def capture(self, step: Step, static: Any) -> fake.FakeCaptured:
        captured = super().capture(step, static)
        launch = captured.launch

        def logged() -> None:
            LOG.append("replay")
            REPLAYING["now"] = True
            try:
                launch()
            finally:
                REPLAYING["now"] = False

        captured.launch = logged  # type: ignore[method-assign]
        return captured


def make_inputs(n: int) -> tuple[np.ndarray]:
    LOG.append(f"make_inputs({n})")
    return fake.make_inputs(n)


def fn(x: np.ndarray) -> np.ndarray:
    if not REPLAYING["now"]:
        LOG.append(f"fn({len(x)}){' captured' if fake.STATE['capturing'] else ''}")
    return fake.rowwise(x)


def test_verify_calls_the_step_in_the_documented_order() -> None:
    register_adapter(FRAMEWORK, LoggingAdapter)
    step = graphcert.step(fn, make_inputs, framework=FRAMEWORK, name="logged", rtol=1e-5,
                          atol=1e-6)  # warmup: its default, 3
    LOG.clear()
    result = graphcert.verify_step(step, "2,4", samples=2)
    assert result.verdict.passed, result.verdict.reasons

    def bucket(b: int, sizes: list[int]) -> list[str]:
        return ([f"make_inputs({b})"] + [f"fn({b})"] * 3 + [f"fn({b}) captured"]
                + ["replay"] * 5 + [f"fn({b})"] * 5
                + [e for n in sizes for e in (f"make_inputs({n})", f"fn({n})", "replay")])

    # bucket 2 holds 1..2, bucket 4 holds 3..4: each samples its lower and upper edge
    assert LOG == bucket(2, [1, 2]) + bucket(4, [3, 4])


def test_the_counts_per_bucket_are_the_documented_ones() -> None:
    """make_inputs 1 + S times, fn warmup + 1 + 5 + S times, replays 5 + S, per bucket."""
    register_adapter(FRAMEWORK, LoggingAdapter)
    step = graphcert.step(fn, make_inputs, framework=FRAMEWORK, name="logged", warmup=2)
    LOG.clear()
    graphcert.verify_step(step, "16", samples=4)
    sizes = 4  # 1, 16 and two seeded between
    assert sum(e.startswith("make_inputs") for e in LOG) == 1 + sizes
    assert sum(e.startswith("fn(") for e in LOG) == 2 + 1 + 5 + sizes
    assert LOG.count("replay") == 5 + sizes
