"""The views of typed results (render/verify, render/bench), drawn the same for the command
that made the result and for `show`: a skipped class, a timed-out timing and an unavailable
queued figure each say so. Synthetic results only."""

from __future__ import annotations

import io
from dataclasses import replace
from typing import Any

from _certfactory import bench_results, topology_results
from rich.console import Console

from graphcert.cert.results.figures import Ended, Unavailable, WayTimings
from graphcert.kinds.bench.result import BenchResult
from graphcert.kinds.bench.views import bench_view
from graphcert.kinds.topology.result import SkippedClass, VerifyResult
from graphcert.kinds.topology.views import verify_view


def text(items: list[Any]) -> str:
    out = io.StringIO()
    console = Console(file=out, width=240, color_system=None)
    for item in items:
        console.print(item)
    return out.getvalue()


def test_verify_view_shows_a_skipped_class_and_its_reason() -> None:
    synthetic = VerifyResult.from_json(topology_results((256,)))
    result = replace(synthetic, classes=(*synthetic.classes,
                                         SkippedClass(512, "synthetic: does not fit")))
    shown = text(verify_view("scan", result))
    assert "verify scan" in shown and "skipped" in shown and "synthetic: does not fit" in shown
    assert "class to class" in shown


def test_bench_view_marks_timeouts_and_unavailable_figures() -> None:
    synthetic = BenchResult.from_json(bench_results())
    size = synthetic.sizes[0]
    timed_out = replace(size.stream.host_enqueue, ended=Ended.TIMEOUT)
    stream = WayTimings(timed_out, Unavailable("synthetic"), size.stream.end_to_end)
    speedup = {**size.speedup, "device": None}
    result = replace(synthetic, sizes=(replace(size, stream=stream, speedup=speedup),))
    shown = text(bench_view("scan", result))
    assert "(timeout)" in shown and "unavailable" in shown and "up-front costs" in shown
