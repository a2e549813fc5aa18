"""`bench --context fresh|both`: the same bench in a fresh single-stream context, which only a
new process has (the several-streams state never goes back). A child `python -m graphcert
bench` runs with the internal `--fresh-child` flag (no settling, JSON on stdout, no
certificate); its typed result is read back and merged into the parent's."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence

from graphcert.cert.results import BenchResult
from graphcert.classes import Buckets
from graphcert.errors import GraphcertError
from graphcert.run.harness import BenchSettings

FRESH_CHILD_FLAG = "--fresh-child"


def child_argv(ref: str, sizes: Sequence[int], settings: BenchSettings, device: int
               ) -> list[list[str]]:
    """The command line of each child run (one per size unless `sizes` is a bucket list or
    one size: the CLI takes --classes SPEC or --size N)."""
    rule = settings.rule
    common = ["--max-noise", repr(rule.max_noise), "--min-samples", str(rule.min_samples),
              "--min-time", repr(rule.min_time_s), "--timeout", repr(rule.timeout_s),
              "--blocker-timeout", repr(settings.blocker_timeout_s),
              "--flush-l2" if settings.flush_l2 else "--no-flush-l2",
              "--placements", str(settings.placements),
              "--placement-contexts", "new" if settings.new_contexts else "same",
              "--hot" if settings.hot else "--no-hot", "--device", str(device),
              "--no-certificate", "--json", FRESH_CHILD_FLAG]
    head = [sys.executable, "-m", "graphcert", "bench", ref]
    if isinstance(sizes, Buckets):
        return [[*head, "--classes", sizes.text, *common]]
    return [[*head, "--size", str(n), *common] for n in sizes]


def parse_child(stdout: str) -> BenchResult:
    """The typed result a --fresh-child run printed: {"results": ..., "verdict": ...}."""
    doc = json.loads(stdout)
    return BenchResult.from_json(doc["results"], doc["verdict"])


def merge(parts: Sequence[BenchResult]) -> BenchResult:
    """One result from per-size child runs (sizes in order; the first run's settings)."""
    first = parts[0]
    if len(parts) == 1:
        return first
    from dataclasses import replace

    from graphcert.cert.results import Telemetry

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
    for argv in child_argv(ref, sizes, settings, device):
        limit = timeout_s if timeout_s is not None else child_timeout_s(settings, sizes)
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=limit,
                                  check=False)
        except subprocess.TimeoutExpired:
            raise GraphcertError(f"bench {ref} in a fresh context (child process) did not "
                                 f"finish in {limit:.0f} s and was stopped") from None
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise GraphcertError(f"bench {ref} in a fresh context (child process) failed "
                                 f"with exit {proc.returncode}: {last}",
                                 exit_code=proc.returncode if proc.returncode in (1, 2) else 1)
        try:
            parts.append(parse_child(proc.stdout))
        except (ValueError, KeyError) as exc:
            raise GraphcertError(f"bench {ref} in a fresh context: the child's output is "
                                 f"not a bench result ({exc})") from exc
    return merge(parts)
