"""`bench --context fresh|both`: the same bench in a fresh single-stream context, which only a
new process has (the several-streams state never goes back). A worker (graphcert.run.worker)
gets a `BenchJob` (the settings, unsettled, the workload reference, its sizes and device),
benches without writing a certificate, and replies with the typed result, which is merged
into the parent's."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace

from graphcert.buckets import Buckets, parse_buckets
from graphcert.errors import ExitStatus, GraphcertError
from graphcert.jsontypes import Doc, JSONObject, JSONValue, as_doc, to_int, to_ints
from graphcert.kinds.bench.result import BenchResult
from graphcert.run.harness import BenchSettings
from graphcert.run.worker import Finished, WorkerProcess

# How the command line said a worker's failure before the reply was typed; the parent's
# message still quotes it that way.
ERROR_PREFIX = "graphcert: error: "


@dataclass(frozen=True)
class BenchJob:
    """Bench `ref` at `sizes` (a bucket list, sent as its text, or sizes) on `device` with
    `settings`, in the worker's own context; no certificate."""

    ref: str
    sizes: Sequence[int]
    settings: BenchSettings
    device: int

    def to_json(self) -> JSONObject:
        sizes: dict[str, JSONValue] = ({"classes": self.sizes.text}
                                       if isinstance(self.sizes, Buckets)
                                       else {"sizes": list(self.sizes)})
        return {"job": "bench", "ref": self.ref, **sizes, "settings": self.settings.to_json(),
                "device": self.device}

    @classmethod
    def from_json(cls, doc: Doc) -> BenchJob:
        sizes: Sequence[int] = (parse_buckets(str(doc["classes"])) if "classes" in doc
                                else to_ints(doc, "sizes"))
        return cls(str(doc["ref"]), sizes, BenchSettings.from_json(as_doc(doc, "settings")),
                   to_int(doc, "device"))


def child_jobs(ref: str, sizes: Sequence[int], settings: BenchSettings, device: int
               ) -> list[BenchJob]:
    """The job of each child run: one per size unless `sizes` is a bucket list (each size in
    a process of its own, as when the child was given --size N). Unsettled: the child times
    the fresh state and starts no child of its own."""
    unsettled = replace(settings, settle=False, context="settled")
    if isinstance(sizes, Buckets):
        return [BenchJob(ref, sizes, unsettled, device)]
    return [BenchJob(ref, (n,), unsettled, device) for n in sizes]


def run_bench_job(job: BenchJob) -> JSONObject:
    """The worker's side: bench as the job says; the typed result as {"results", "verdict"}
    (a failed verdict is a result, not an error: the parent combines it)."""
    from graphcert.options import Options
    from graphcert.run.jobs import bench_workloads

    # The child writes no certificate (its parent does): no key, no git, nothing to read.
    (done,) = bench_workloads([job.ref], job.sizes, job.settings, device=job.device,
                              options=Options())
    return {"results": done.result.to_json(), "verdict": done.result.verdict.to_json()}


def parse_child(doc: Doc) -> BenchResult:
    """The typed result a bench worker replied with: {"results": ..., "verdict": ...}."""
    verdict = None if doc["verdict"] is None else as_doc(doc, "verdict")  # null: judged anew
    return BenchResult.from_json(as_doc(doc, "results"), verdict)


def merge(parts: Sequence[BenchResult]) -> BenchResult:
    """One result from per-size child runs (sizes in order; the first run's settings)."""
    first = parts[0]
    if len(parts) == 1:
        return first
    from graphcert.cert.results.measure import Telemetry

    sizes = tuple(s for p in parts for s in p.sizes)
    tels = [p.telemetry for p in parts if p.telemetry is not None]
    tel = Telemetry(*(sum(getattr(t, f) for t in tels) for f in
                      ("syncs", "htod_bytes", "dtoh_bytes", "htod_copies", "dtoh_copies"))
                    ) if tels else None
    verdict = BenchResult.judge(sizes, clock_unavailable=first.clock_unavailable,
                                other_context=first.other_context)
    return replace(first, sizes=sizes, telemetry=tel, verdict=verdict,
                   clock={"before_mhz": first.clock.get("before_mhz"),
                          "after_mhz": parts[-1].clock.get("after_mhz")})


def child_timeout_s(settings: BenchSettings, sizes: Sequence[int]) -> float:
    """A bound on one child's run, so that a stuck child cannot hang the parent. Each
    sampling loop (3 cold quantities and the hot one, on both sides) ends at the stop rule's
    timeout once it has 2 samples, and one sample holds a stream at most the blocker's
    timeout; that per placement and size, plus 60 s for start-up and compiling, and 5 s per
    placement for a new context (opening one, settling it and loading modules take < 1 s)."""
    loops = 2 * (3 + (1 if settings.hot else 0))
    per_loop = settings.rule.timeout_s + 2 * settings.blocker_timeout_s
    renewal = 5.0 if settings.new_contexts else 0.0
    return (loops * per_loop + renewal) * settings.placements * max(len(sizes), 1) + 60.0


def bench_fresh(ref: str, sizes: Sequence[int], settings: BenchSettings, device: int,
                timeout_s: float | None = None) -> BenchResult:
    """Run bench of `ref` in child processes whose contexts stay in the single-stream state.
    A child that runs past `timeout_s` (default: child_timeout_s) is ended: one-line error."""
    parts = []
    for job in child_jobs(ref, sizes, settings, device):
        limit = timeout_s if timeout_s is not None else child_timeout_s(settings, sizes)
        worker = WorkerProcess.start(job)
        try:
            done = worker.wait(limit)
        except subprocess.TimeoutExpired:
            worker.kill()
            raise GraphcertError(f"bench {ref} in a fresh context (child process) did not "
                                 f"finish in {limit:.0f} s and was stopped") from None
        except BaseException:  # Ctrl-C: the child goes with its parent
            worker.kill()
            raise
        parts.append(_result_of(ref, done))
    return merge(parts)


def _result_of(ref: str, done: Finished) -> BenchResult:
    """The child's typed result, or its failure as one line (its typed error; else, for a
    child that crashed or was killed, its last words)."""
    reply = done.reply
    if done.exit_code != 0:
        if reply is not None and reply.error is not None:
            last = ERROR_PREFIX + reply.error.one_line()
        else:
            last = ("\n".join(done.messages).strip().splitlines() or ["(no output)"])[-1]
        code = done.exit_code
        raise GraphcertError(f"bench {ref} in a fresh context (child process) failed "
                             f"with exit {code}: {last}",
                             exit_code=code if code in (ExitStatus.FAILED, ExitStatus.UNUSABLE)
                             else ExitStatus.FAILED)
    try:
        if reply is None or reply.result is None:
            raise ValueError("it replied with no result")
        return parse_child(reply.result)
    except (ValueError, KeyError) as exc:
        raise GraphcertError(f"bench {ref} in a fresh context: the child's output is "
                             f"not a bench result ({exc})") from exc
