"""Is the plan's model right? Replay a traffic sample with a plan's bucket list and with the vLLM
preset and compare the measured device time per step with the plan's expected figures
(issue 35: within 5%, or say why).

    python benchmarks/plan_replay_check.py --certificate reports/plan-...json
    python benchmarks/plan_replay_check.py --traffic examples/traffic/skewed.csv   # plan first

For a plan certificate (or a plan made here, in this process, with `graphcert plan`'s
defaults) and its step (default examples/steps/torch_decode.py:DECODE), draw STEPS batch
sizes from the plan's traffic (seeded), and serve each as a list says: padded up to the
smallest bucket >= n and that bucket's graph replayed, or, above the largest bucket, the step
called eagerly at n. Every graph of both lists is captured first and kept (as an engine keeps
them). Each step is timed as the plan's cost curve was measured (run/steps_bench.py through
run/plan.py): CUDA events on the framework's stream around the step queued behind
graphcert's blocking kernel, L2 cleared before (graphcert's harness, one sample per step).
The two lists are served alternately, step by step, so drift moves both alike.

Printed per list: the plan's expected time per step, the measured mean and their ratio (the
check); the model applied to exactly the sampled steps (the sample's drift from the
traffic's shares taken out) and rebuilt from this run's own per-size medians (the plan uses
medians: a gap between that and the mean is the steps' tail, not the model); per bucket the
expected replay time against the measured median. Then the lists' ratio, expected against measured.
Also, for reference only, the same sample served back to back without the blocking kernel
or L2 clearing (the events then include any wait for the host's launches: what a serving
loop sees, not what the plan models). Exit 0 when both lists are within TOLERANCE, else 1.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphcert.frameworks.padding import resolve  # noqa: E402
from graphcert.kinds.plan.result import PlanResult  # noqa: E402
from graphcert.plan.costs import CostCurve  # noqa: E402
from graphcert.plan.evaluate import Evaluation  # noqa: E402
from graphcert.plan.traffic import Traffic  # noqa: E402
from graphcert.run.harness import QueueUnavailable  # noqa: E402

TOLERANCE = 0.05  # the issue's: measured mean within 5% of the expected figure
STEP = str(ROOT / "examples/steps/torch_decode.py:DECODE")
WARMUP = 20  # untimed steps of each list first (lazy loading, allocator, clocks)


def sample_sizes(traffic: Traffic, steps: int, seed: int) -> list[int]:
    """`steps` batch sizes drawn from the traffic's shares (seeded, with replacement)."""
    rng = np.random.default_rng(seed)
    return [int(s) for s in rng.choice(np.asarray(traffic.sizes), size=steps,
                                       p=np.asarray(traffic.shares()))]


def serving_bucket(buckets: Sequence[int], n: int) -> int | None:
    """The smallest bucket >= n, or None: the batch runs eager."""
    return next((b for b in buckets if b >= n), None)


@dataclass
class Served:
    """One list's timed steps: (n, bucket or None, seconds)."""

    row: Evaluation
    steps: list[tuple[int, int | None, float]]

    @property
    def mean_s(self) -> float:
        return statistics.fmean(t for _, _, t in self.steps)

    def sample_model_s(self, curve: CostCurve) -> float:
        """The plan's model applied to exactly these steps (the cost curve's replay time of
        each step's bucket, or its eager time at n): the plan's figure less the sample's
        own drift from the traffic's shares."""
        return statistics.fmean(curve.at(b).replay_s if b is not None else curve.at(n).eager_s
                                for n, b, _ in self.steps)

    def median_model_s(self) -> float:
        """The plan's expectation over this sample, with this run's own median per bucket
        (and per eager size) in place of the cost curve's."""
        by_key: dict[tuple[str, int], list[float]] = defaultdict(list)
        for n, b, t in self.steps:
            by_key[("graph", b) if b is not None else ("eager", n)].append(t)
        medians = {k: statistics.median(v) for k, v in by_key.items()}
        return statistics.fmean(medians[("graph", b) if b is not None else ("eager", n)]
                                for n, b, _ in self.steps)

    def per_bucket(self) -> dict[int | None, list[float]]:
        out: dict[int | None, list[float]] = defaultdict(list)
        for _, b, t in self.steps:
            out[b].append(t)
        return out


def ratio_line(label: str, expected: float, measured: float) -> str:
    off = measured / expected - 1 if expected > 0 else float("inf")
    mark = "within" if abs(off) <= TOLERANCE else "OUTSIDE"
    return (f"{label:<12} expected {expected * 1e6:9.2f} us  measured {measured * 1e6:9.2f} us"
            f"  ({off:+.2%}, {mark} {TOLERANCE:.0%})")


def load_plan(args: argparse.Namespace) -> PlanResult:
    """The plan: from its certificate, or made here with `graphcert plan`'s defaults."""
    if args.certificate is not None:
        from graphcert.fileio import read_json
        from graphcert.workloads.registry import parse_ref

        doc = read_json(args.certificate, "plan certificate")
        if doc.get("kind") != "plan":
            raise SystemExit(f"{args.certificate} is a {doc.get('kind')!r} certificate, "
                             "not a plan")
        planned = parse_ref(str(doc["workload"]["ref"])).target
        if Path(planned).name != Path(args.step).name:  # file.py:STEP, wherever it lies
            raise SystemExit(f"{args.certificate} plans {planned}, not {args.step}: give "
                             "--step")
        print(f"plan certificate {args.certificate.name}: measured on "
              f"{doc['environment']['gpu']['name']}")
        return PlanResult.from_json(doc["results"], doc.get("verdict"))
    from graphcert.options import Options
    from graphcert.plan.costs import Budgets
    from graphcert.run.plan import PLAN_SETTINGS, PlanRequest, plan_step

    request = PlanRequest(args.step, Path(args.traffic), Budgets(max_size=args.max_size))
    return plan_step(request, PLAN_SETTINGS, device=args.device, options=Options()).result


def vllm_row(plan: PlanResult) -> Evaluation:
    rows = [r for r in plan.comparisons if r.label.startswith("vllm:")]
    if not rows:
        raise SystemExit("the plan compares no vllm:MAX list")
    return rows[0]


class Replayer:
    """The step's graphs for every bucket of the lists, and a one-sample timer."""

    def __init__(self, step: Any, ref: str, buckets: Sequence[int], device: int) -> None:
        from graphcert.apicheck import as_tuple
        from graphcert.run.harness import BenchSettings
        from graphcert.run.steps import StepVerifier, open_adapter
        from graphcert.run.steps_bench import framework_harness
        from graphcert.stats import StopRule

        self.step = step
        self._as_tuple = as_tuple
        self.verifier = StepVerifier(step, ref, open_adapter(step, device), 2, 0)
        self.adapter = self.verifier.adapter
        self.verifier.prepare()
        self.graphs: dict[int, tuple[Any, tuple[Any, ...]]] = {}
        self.inputs: dict[int, tuple[Any, ...]] = {}
        for b in sorted(set(buckets)):
            self.graphs[b] = self.verifier.capture(b)
        one = StopRule(min_samples=1, min_time_s=0.0, max_samples=1)  # one sample a call
        # run/plan.PLAN_SETTINGS's harness (L2 cleared, blocking kernel), one sample a call
        self.harness, self._close = framework_harness(
            self.adapter, BenchSettings(rule=one, hot=False), device)

    def warm(self, served: Sequence[tuple[int, int | None]]) -> None:
        """Every size's inputs made and every (size, bucket) served once, waited for, before
        any is timed: no first-use allocation or lazy load inside a timed step."""
        for n, bucket in sorted(set(served), key=lambda nb: (nb[0], nb[1] or 0)):
            enqueue, _ = self.enqueue(n, bucket)
            enqueue(self.harness.stream)
            self.adapter.synchronize()

    def enqueue(self, n: int, bucket: int | None) -> tuple[Callable[[Any], None], int]:
        """What serving a batch of n does on the stream (the padding copied first, untimed),
        and how many operations it queues (for the blocker's messages)."""
        if n not in self.inputs:
            self.inputs[n] = self._as_tuple(self.step.make_inputs(n))
        values = self.inputs[n]
        if bucket is None:
            return (lambda _s: self.adapter.call(self.step, values)), 16
        captured, static = self.graphs[bucket]
        self.adapter.pad_into(static, values, n,
                              resolve(self.step.pad_value, len(values), "pad_value", 0.0))
        return (lambda _s: captured.launch()), 1

    def held(self, n: int, bucket: int | None) -> float:
        """Seconds of one step, queued behind the blocking kernel, L2 cleared before."""
        enqueue, ops = self.enqueue(n, bucket)
        got = self.harness.device_samples(enqueue, ops)
        return float(got.samples[0])

    def back_to_back(self, plan: Sequence[tuple[int, int | None]]) -> list[float]:
        """Seconds of each step served back to back (events around each, no blocker, no L2
        clearing); the host's waits show up in them."""
        from graphcert.cuda.stream import Event

        events = [(Event(), Event()) for _ in plan]
        stream = self.harness.stream
        try:
            stream.synchronize()
            for (n, b), (start, end) in zip(plan, events, strict=True):
                enqueue, _ = self.enqueue(n, b)
                start.record(stream)
                enqueue(stream)
                end.record(stream)
            stream.synchronize()
            return [start.elapsed_s(end) for start, end in events]
        finally:
            for start, end in events:
                start.destroy()
                end.destroy()

    def close(self) -> None:
        try:
            self._close()
        finally:
            for captured, _ in self.graphs.values():
                captured.release()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    got = parser.add_mutually_exclusive_group(required=True)
    got.add_argument("--certificate", type=Path, help="a plan certificate")
    got.add_argument("--traffic", help="plan here first, for this traffic file")
    parser.add_argument("--step", default=STEP, help="the plan's step (path.py:STEP)")
    parser.add_argument("--max-size", type=int, default=None, help="as graphcert plan's")
    parser.add_argument("--steps", type=int, default=2000, help="steps in the sample")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()

    from graphcert.workloads.registry import load

    plan = load_plan(args)
    step = load(args.step).step()
    rows = [plan.chosen, vllm_row(plan)]
    sizes = sample_sizes(plan.traffic, args.steps, args.seed)
    print(f"{args.step}: {plan.traffic.source} ({plan.traffic_digest[:12]}), "
          f"{len(sizes):,} steps (seed {args.seed}); plan {list(plan.chosen.buckets)} "
          f"({plan.method.value}); {rows[1].label}")
    rep = Replayer(step, args.step, [b for r in rows for b in r.buckets], args.device)
    served = [Served(r, []) for r in rows]
    try:
        rep.warm([(n, serving_bucket(s.row.buckets, n)) for n in set(sizes) for s in served])
        for n in sizes[:WARMUP]:
            for s in served:
                rep.held(n, serving_bucket(s.row.buckets, n))
        for n in sizes:
            for s in served:
                b = serving_bucket(s.row.buckets, n)
                try:
                    s.steps.append((n, b, rep.held(n, b)))
                except QueueUnavailable as exc:  # the step waited on the host under the hold
                    where = f"bucket {b}" if b is not None else "eager"
                    raise SystemExit(f"{s.row.label}, n={n} ({where}): {exc}") from None
        b2b = [rep.back_to_back([(n, serving_bucket(s.row.buckets, n)) for n in sizes])
               for s in served]
    finally:
        rep.close()

    ok = True
    report: dict[str, Any] = {"steps": len(sizes), "seed": args.seed, "lists": {}}
    for s, bb in zip(served, b2b, strict=True):
        row, mean = s.row, s.mean_s
        ok &= abs(mean / row.expected_s - 1) <= TOLERANCE
        print(ratio_line(row.label, row.expected_s, mean))
        print(f"{'':<12} the model over this very sample: "
              f"{s.sample_model_s(plan.curve) * 1e6:.2f} us; with this run's per-size "
              f"medians: {s.median_model_s() * 1e6:.2f} us; back to back (no blocker, L2 "
              f"warm; for reference): {statistics.fmean(bb) * 1e6:.2f} us")
        for b, times in sorted(s.per_bucket().items(), key=lambda kv: kv[0] or 1 << 62):
            want = (plan.curve.at(b).replay_s if b is not None else statistics.fmean(
                plan.curve.at(n).eager_s for n, bk, _ in s.steps if bk is None))
            where = f"bucket {b}" if b is not None else "eager"
            print(f"{'':<14}{where:<11} {len(times):5d} steps  expected "
                  f"{want * 1e6:8.2f}  median {statistics.median(times) * 1e6:8.2f}  mean "
                  f"{statistics.fmean(times) * 1e6:8.2f} us")
        report["lists"][row.label] = {
            "buckets": list(row.buckets), "expected_s": row.expected_s, "mean_s": mean,
            "sample_model_s": s.sample_model_s(plan.curve),
            "median_model_s": s.median_model_s(), "back_to_back_mean_s": statistics.fmean(bb)}
    want = rows[0].expected_s / rows[1].expected_s
    have = served[0].mean_s / served[1].mean_s
    print(f"plan / {rows[1].label}: expected {want:.3f}, measured {have:.3f}")
    print("model check: " + ("PASS" if ok else "FAIL") + f" (both lists within {TOLERANCE:.0%})")
    if args.json is not None:
        args.json.write_text(json.dumps({**report, "passed": ok}, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
