"""The worker protocol (graphcert.run.worker): jobs, replies and progress events round-trip
through JSON, and a worker's error comes back as a typed value, on the CPU.

The real `python -m graphcert.worker` runs here on jobs that fail before any GPU work (an
unknown workload); a synthetic worker script stands in for one that crashes.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from _certfactory import bench_results

from graphcert.buckets import parse_buckets
from graphcert.cert.results.fleet import ProgressEvent, WorkerError
from graphcert.errors import GraphcertError
from graphcert.kinds.bench.result import BenchResult
from graphcert.options import Options
from graphcert.run import fresh, jobs, worker
from graphcert.run.fresh import BenchJob
from graphcert.run.harness import BenchSettings
from graphcert.run.worker import CommandJob, Reply, WorkerProcess, job_from_json
from graphcert.stats import StopRule

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ,
       "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
UNKNOWN = "unknown workload 'nosuchworkload'"


def _json(doc: dict[str, Any]) -> Any:
    """`doc` as the other process reads it: written to text and parsed again."""
    return json.loads(json.dumps(doc))


def test_jobs_replies_and_events_round_trip_through_json() -> None:
    settings = BenchSettings(StopRule(0.01, 12, 0.25, 3.0, max_samples=40), flush_l2=False,
                             blocker_timeout_s=2.5, max_queued_ops=64, placements=3,
                             new_contexts=False, settle=False, hot=False, context="settled")
    sent = [CommandJob("verify", {"workloads": ("scan", "--lr", "0.1"), "samples": 3,
                        "out_dir": "certs", "no_certificate": False}, 2, uuid_names=True,
                       progress=True),
            CommandJob("bench", {"workloads": ("chain",), "plot_path": None}, 0, key_file="k"),
            BenchJob("chain[kernels=16]", parse_buckets("2^8..2^10"), settings, 1),
            BenchJob("scan", (100,), BenchSettings(), 0)]
    for job in sent:
        assert job_from_json(_json(job.to_json())) == job
    assert BenchSettings.from_json(_json(settings.to_json())) == settings
    error = WorkerError("synthetic failure", "fix it", 2)
    result = {"results": {"synthetic": True}, "verdict": {"passed": True}}
    for reply in (Reply(0), Reply(2, error), Reply(0, result=result)):
        assert Reply.from_json(_json(reply.to_json())) == reply
    for event in (ProgressEvent("total", 12.0), ProgressEvent("advance", 1.0)):
        assert ProgressEvent.from_json(_json(event.to_json())) == event
    assert error.one_line() == "synthetic failure (fix it)"
    with pytest.raises(ValueError, match="not a worker job"):
        job_from_json({"job": "synthetic"})
    with pytest.raises(ValueError, match="not a progress event"):
        ProgressEvent.from_json({"progress": "synthetic", "units": 1})


@pytest.mark.parametrize("job", [CommandJob("verify", {"workloads": ("nosuchworkload",)}, 0,
                                            progress=True),
                                 BenchJob("nosuchworkload", (8,), BenchSettings(), 0)],
                         ids=["command", "bench"])
def test_a_workers_error_comes_back_typed_not_printed(job: CommandJob | BenchJob) -> None:
    """The real worker: its error is in its reply (message, fix, exit status), not a
    `graphcert: error:` line for its parent to find on stderr."""
    done = WorkerProcess.start(job, env=ENV).wait(120)
    assert done.exit_code == 2 and done.reply is not None
    error = done.reply.error
    assert error is not None and error.message == UNKNOWN and error.exit_status == 2
    assert error.hint is not None and "built-ins are" in error.hint
    assert done.messages == () and done.stdout == ""  # nothing printed besides


def test_a_failed_fresh_child_is_one_line_from_its_typed_error() -> None:
    with pytest.raises(GraphcertError) as exc:
        fresh.bench_fresh("nosuchworkload", [8], BenchSettings(), 0, timeout_s=120)
    line = exc.value.one_line()
    assert line.startswith("bench nosuchworkload in a fresh context (child process) failed "
                           f"with exit 2: graphcert: error: {UNKNOWN} (built-ins are")
    assert exc.value.exit_code == 2 and "\n" not in line


def test_a_crashed_fresh_child_is_one_line_from_its_last_words(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # synthetic: a worker that crashes with a traceback and replies nothing
    monkeypatch.setattr(worker, "worker_command", lambda: [
        sys.executable, "-c", "raise RuntimeError('synthetic crash')"])
    with pytest.raises(GraphcertError) as exc:
        fresh.bench_fresh("chain", [8], BenchSettings(), 0, timeout_s=60)
    assert exc.value.one_line() == ("bench chain in a fresh context (child process) failed "
                                    "with exit 1: RuntimeError: synthetic crash")
    assert exc.value.exit_code == 1


def test_a_bench_job_replies_with_its_result_even_when_its_verdict_failed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's side of a bench job, in this process (bench itself replaced): a failed
    verdict is a result for the parent to combine, not an error."""
    throttled = BenchResult.from_json(bench_results((256,), throttled=True))
    assert not throttled.verdict.passed
    calls: list[tuple[Any, ...]] = []

    def bench_workloads(refs: list[str], sizes: Any, settings: BenchSettings, *,
                        device: int = 0, **kw: Any) -> list[jobs.Certified[BenchResult]]:
        calls.append((refs, sizes, settings, device, kw))
        return [jobs.Certified(refs[0], throttled)]

    monkeypatch.setattr(jobs, "bench_workloads", bench_workloads)
    settings = replace(BenchSettings(), settle=False, placements=2)
    job = BenchJob("chain", parse_buckets("1,2"), settings, 3)
    received = job_from_json(_json(job.to_json()))
    assert isinstance(received, BenchJob)
    doc = fresh.run_bench_job(received)
    assert fresh.parse_child(_json(doc)) == throttled
    # no certificate: no out_dir, and options that read nothing (no key, no git)
    assert calls == [(["chain"], parse_buckets("1,2"), settings, 3, {"options": Options()})]
