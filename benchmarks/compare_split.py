"""Per-sample costs of a framework step's comparison, timed piece by piece on the GPU
(the PyTorch decode example), against which verify's compare phase can be set:

    python benchmarks/compare_split.py
    python benchmarks/compare_split.py --synthetic   # CPU: the in-place part, synthetic

For buckets 8, 64 and 136 (a sampled n each): whether the graph's rows equal the eager ones
bit for bit; then medians of 60 (µs) of a synchronize, the host copies (pageable, pinned),
a device clone, the device equality (== .all() .item(), torch.equal), numpy's comparison,
the whole host path, the same after a replay, a snapshot, pad_into and the graph-memory
read. Then in place: verify over vllm:136 with the comparison's pieces timed as verify
spends them, beside the compare phase. The first part ran on an H100 on 2026-11-23 as
.probe/cmp_probe.py (benchmarks/NOTES.md, fourth session, has its figures); the in-place
part has run only on the synthetic framework. Nothing is written."""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _timing import median_s  # noqa: E402

from graphcert.frameworks.compare import first_mismatch  # noqa: E402
from graphcert.workloads.registry import load  # noqa: E402

torch: Any = None  # imported in main(): PyTorch is no dependency of graphcert


def med(fn: Callable[[], object], reps: int = 60,
        before: Callable[[], object] | None = None) -> float:
    """Median microseconds of fn(), each call after `before` (default: a synchronize)."""
    return median_s(fn, reps, before or torch.cuda.synchronize) * 1e6


def bucket(ad: Any, step: Any, cap: int, n: int) -> None:
    """Time every piece at bucket `cap`, sample size `n`, and print them."""
    static = ad.static_inputs(step.make_inputs(cap))
    c = ad.capture(step, static)
    vals = step.make_inputs(n)
    want = ad.eager(step, vals)[0]
    ad.pad_into(static, vals, n, (0.0,) * len(vals))
    c.launch()
    torch.cuda.synchronize()
    got = c.outputs[0]
    gh, wh = got[:n], want[:n]
    k = wh.clone()
    pinned = torch.empty(gh.shape, dtype=gh.dtype, pin_memory=True)
    hg, hw = ad.to_numpy(gh), ad.to_numpy(wh)

    def replay() -> None:
        c.launch()
        torch.cuda.synchronize()

    r = {
        "bit-equal rows (1/0)": float((gh == wh).all().item()),
        "differing elements": float((gh != wh).sum().item()),
        "synchronize": med(torch.cuda.synchronize),
        "cpu() pageable": med(lambda: gh.cpu()),
        "adapter.to_numpy": med(lambda: ad.to_numpy(gh)),
        "pinned copy_ + stream sync": med(lambda: (pinned.copy_(gh, non_blocking=True),
                                                   torch.cuda.current_stream().synchronize())),
        "clone (no sync)": med(lambda: wh.clone()),
        "eq (no sync)": med(lambda: gh == k),
        "eq.all.item": med(lambda: (gh == k).all().item()),
        "torch.equal": med(lambda: torch.equal(gh, k)),
        "first_mismatch on host arrays": med(lambda: first_mismatch([hg], [hw], 2e-2, 2e-2)),
        "host path (2 to_numpy + first_mismatch)": med(
            lambda: first_mismatch([ad.to_numpy(gh)], [ad.to_numpy(wh)], 2e-2, 2e-2)),
        "after replay: host path": med(
            lambda: first_mismatch([ad.to_numpy(gh)], [ad.to_numpy(wh)], 2e-2, 2e-2),
            30, replay),
        "after replay: eq.all.item": med(lambda: (gh == k).all().item(), 30, replay),
        "after replay: to_numpy": med(lambda: ad.to_numpy(gh), 30, replay),
        "snapshot": med(lambda: ad.snapshot(c, "x"), 20),
        "pad_into": med(lambda: ad.pad_into(static, vals, n, (0.0,) * len(vals))),
        "graph_memory": med(ad.graph_memory, 20),
    }
    for key, v in r.items():
        print(f"bucket {cap:3d} n={n:3d}: {key:42s} {v:9.1f} us")
    c.release()


def in_place(step: Any, ref: str, adapter: Any, classes: str = "vllm:136") -> None:
    """Verify the step over `classes` with the comparison's pieces wrapped in timers, and
    print each piece's µs per sample as verify spends them (eager rows kept, graph rows
    read, the host copies, numpy's comparison) beside the compare phase's own total."""
    from graphcert.buckets import parse_buckets
    from graphcert.frameworks import compare as steps_compare
    from graphcert.run.steps import Phases, StepVerifier

    spent = Phases()

    def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        return lambda *args, **kw: spent.timed(name, lambda: fn(*args, **kw))

    rows = steps_compare.RowCompare
    originals = (rows.keep, rows.mismatch, steps_compare.first_mismatch)
    try:
        rows.keep = timed("keep (eager rows)", rows.keep)  # type: ignore[method-assign]
        rows.mismatch = timed("mismatch (graph rows)", rows.mismatch)  # type: ignore[method-assign]
        steps_compare.first_mismatch = timed("first_mismatch (numpy)", first_mismatch)
        adapter.to_numpy = timed("to_numpy (host copies)", adapter.to_numpy)
        adapter.head = timed("head (views)", adapter.head)
        buckets = parse_buckets(classes)
        verifier = StepVerifier(step, ref, adapter, 4, 0)
        verifier.prepare()
        for capacity in buckets:
            verifier.verify_bucket(capacity, buckets.lower_edge(capacity))
    finally:
        rows.keep, rows.mismatch, steps_compare.first_mismatch = originals  # type: ignore[method-assign]
    samples = 4 * len(buckets)
    print(f"in place, {ref} over {classes} ({samples} samples), µs per sample:")
    figures = {"compare phase (verify)": verifier.phases.seconds["compare"], **spent.seconds}
    for name, seconds in figures.items():
        print(f"  {name:42s} {seconds / samples * 1e6:9.1f}")


def main() -> None:
    global torch
    if "--synthetic" in sys.argv[1:]:  # CPU: the tests' synthetic framework, in place only
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        import _fakestep

        _fakestep.register()
        in_place(_fakestep.SAFE, "synthetic:SAFE", _fakestep.FakeAdapter())
        return
    try:
        import torch as torch_module
    except ImportError as exc:
        raise SystemExit(f"compare_split needs PyTorch with CUDA: {exc}") from None

    from graphcert.frameworks.torch_adapter import TorchAdapter

    torch = torch_module
    ref = str(Path(__file__).resolve().parents[1] / "examples/steps/torch_decode.py:DECODE")
    step = load(ref).step()
    ad = TorchAdapter(0)
    ad.prepare()
    for cap, n in ((8, 5), (64, 57), (136, 130)):
        bucket(ad, step, cap, n)
    in_place(step, ref, TorchAdapter(0))


if __name__ == "__main__":
    main()
