"""Words that must say what is so: the record policy's header runs the gate on paths that
exist, and the record table writes a microsecond as every other view does (µs)."""

from __future__ import annotations

import re
from pathlib import Path

from graphcert.kinds.record import views

ROOT = Path(__file__).resolve().parents[2]


def test_the_record_policy_header_names_paths_that_exist() -> None:
    text = (ROOT / "examples" / "record" / "policy.toml").read_text()
    named = re.findall(r"graphcert gate (\S+) --policy", text)
    assert named and all((ROOT / p).exists() for p in named), named


def test_the_record_table_writes_microseconds_as_the_rest() -> None:
    assert views._us(1500.0) == "1.5 \u00b5s"


def test_the_words_on_what_needs_a_gpu_name_every_command_once() -> None:
    """The no-driver error and the top-level help name each command on the side it is on:
    every command of the CLI (inventory on both: a workload needs a GPU, a snapshot none)."""
    from click.testing import CliRunner

    from graphcert.cli import COMMANDS, cli
    from graphcert.errors import GPU_COMMANDS, GPU_FREE_COMMANDS, WHAT_NEEDS_A_GPU

    assert sorted((*GPU_COMMANDS, *GPU_FREE_COMMANDS, "inventory")) == sorted(COMMANDS)
    help_text = " ".join(CliRunner().invoke(cli, ["--help"]).output.split())
    for name in COMMANDS:
        assert name in WHAT_NEEDS_A_GPU and name in help_text, name
    assert "inventory of a workload" in help_text and "inventory of a saved snapshot" in help_text


def test_the_plan_names_its_traffic_once() -> None:
    """`show plan`'s traffic line reads "traffic  FILE: ...", never "traffic  traffic FILE"."""
    import json
    from pathlib import Path

    from graphcert.kinds.plan.result import PlanResult
    from graphcert.kinds.plan.views import plan_lines

    root = Path(__file__).resolve().parents[2]
    for path in sorted(root.glob("reports/plan-*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        lines = dict(plan_lines(PlanResult.from_json(doc["results"], doc["verdict"])))
        assert lines["traffic"].startswith("examples/traffic/"), lines["traffic"]


def test_a_plan_says_when_its_gain_is_within_the_models_error() -> None:
    """The recorded plans expect +0.9% and +1.2% over the committed vLLM lists, less than a
    line between measured sizes misses a measured one by (2.5-2.7%): the view says the model
    cannot tell them apart. The error is the leave-one-out miss of the curve's lines."""
    import json
    from pathlib import Path
    from types import SimpleNamespace

    from graphcert.kinds.plan.result import PlanResult
    from graphcert.kinds.plan.views import interpolation_error, plan_lines
    from graphcert.plan.costs import CostPoint

    root = Path(__file__).resolve().parents[2]
    for path in sorted(root.glob("reports/plan-*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        plan = PlanResult.from_json(doc["results"], doc["verdict"])
        gain = dict(plan_lines(plan))["gain"]
        assert "faster per step than current" in gain and "cannot tell" in gain, gain
    # 1 -> 2 -> 4: the line from 1 to 4 puts size 2 at 2.0 s where it measured 2.5 s
    curve = SimpleNamespace(points=[CostPoint(1, 1.0, 1.0, 0.0, 0), CostPoint(2, 2.5, 1.0, 0.0, 0),
                                    CostPoint(4, 4.0, 1.0, 0.0, 0),
                                    CostPoint(3, 9.0, 1.0, 0.0, 0, measured=False)])
    assert interpolation_error(SimpleNamespace(curve=curve)) == 0.5 / 2.5  # type: ignore[arg-type]


def test_parameter_values_print_in_the_api_as_in_the_cli() -> None:
    """The API keeps parameter values as ints; graphcert.format_param is the rule inventory
    and diff print them by (2^32 and up in hex), so both read alike."""
    from click.testing import CliRunner

    import graphcert
    from graphcert.cli import cli

    assert graphcert.format_param(0x7F0000001000) == "0x7f0000001000"
    assert graphcert.format_param(256) == "256" and graphcert.format_param(None) == "-"
    path = "tests/fixtures/snapshots/scan-c256.snapshot.json"
    values = graphcert.load(path).nodes[0].attrs["param_values"]
    assert all(isinstance(v, int) for v in values) and any(v >= 1 << 32 for v in values)
    shown = CliRunner().invoke(cli, ["inventory", "--tree", path], env={"COLUMNS": "200"})
    assert all(graphcert.format_param(v) in shown.stdout for v in values), shown.stdout


def test_the_sweep_names_its_plot_as_drawn_not_as_present() -> None:
    """reports/ holds the sweep certificate but not its plot: show and the report name the
    plot as the run drew it, not as a file beside the certificate now."""
    import json
    from pathlib import Path

    from graphcert.kinds.sweep.html import sweep_view
    from graphcert.kinds.sweep.result import SweepFit
    from graphcert.kinds.sweep.views import PLOT_NOTE, show_view

    root = Path(__file__).resolve().parents[2]
    (path,) = root.glob("reports/sweep-*.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    fit = SweepFit.from_json(doc["results"], doc["verdict"])
    assert fit.plot is not None and not (path.parent / fit.plot).exists()
    lines = [str(r) for r in show_view("chain", fit)]
    assert any(fit.plot in ln and PLOT_NOTE in ln for ln in lines), lines
    assert PLOT_NOTE in sweep_view(fit)


def test_a_traced_replay_reading_faster_says_why() -> None:
    """A profile class whose traced replays read faster than its untraced ones (torch_decode
    b1 read 0.776x) is not left unexplained: the line says what the figure holds."""
    from graphcert.kinds.profile.result import ReplayOverhead
    from graphcert.kinds.profile.views import FASTER_TRACED, overhead_text

    faster = ReplayOverhead(traced_ns=7_760.0, untraced_ns=10_000.0, samples=200)
    slower = ReplayOverhead(traced_ns=13_510.0, untraced_ns=10_000.0, samples=200)
    assert overhead_text(faster).startswith("0.776x") and FASTER_TRACED in overhead_text(faster)
    assert FASTER_TRACED not in overhead_text(slower)
