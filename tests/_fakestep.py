"""A synthetic framework for CPU tests of framework steps: numpy arrays stand in for device
arrays, "capture" records the step over the static inputs, "replay" recomputes it into the
static outputs, and the snapshot is a synthetic graph (kernel names say "synthetic"; nothing
here looks like, or is, a GPU recording). `register()` makes framework "synthetic" usable.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcert.apicheck import as_tuple
from graphcert.frameworks.adapters import register_adapter
from graphcert.frameworks.padding import Fill, fill_rows
from graphcert.frameworks.step import Step
from graphcert.model import GraphSnapshot, NodeKind, RawGraph, RawNode, snapshot_from_raw

FRAMEWORK = "synthetic"
FRAMEWORK_DEVICE = "synthetic-device"  # the same, comparing "on the device"
# "recording": the host numbers a capture under way reads; "replaying": a replay's
STATE: dict[str, Any] = {"capturing": False, "captures": 0, "recording": {},
                         "replaying": None}


def sync_in_step() -> None:
    """What a step calling the framework's synchronise does: refused while capturing."""
    if STATE["capturing"]:
        raise RuntimeError("synthetic: operation not permitted when stream is capturing")


def host_number(key: str, live: float) -> float:
    """A Python number the step reads, as a real graph holds it: recorded when captured and
    replayed as recorded (a replay here re-runs the step, so it is told the frozen value)."""
    if STATE["capturing"]:
        STATE["recording"][key] = live
    elif STATE["replaying"] is not None:
        return float(STATE["replaying"][key])
    return live


def replaying() -> bool:
    """Whether the step runs as a replay (no Python runs in a real graph's replay)."""
    return STATE["replaying"] is not None


def synthetic_snapshot(capacity: int, name: str) -> GraphSnapshot:
    """Two synthetic kernels; the second changes kernel above bucket 8 (as cuBLAS does)."""
    gemm = "synthetic_gemm_small" if capacity <= 8 else "synthetic_gemm_large"
    nodes = (RawNode(0, NodeKind.KERNEL, {"name": "synthetic_scale",
                                          "grid": [max(capacity // 4, 1), 1, 1],
                                          "block": [256, 1, 1], "shared_mem_bytes": 0,
                                          "param_sizes": [8, 8]}),
             RawNode(1, NodeKind.KERNEL, {"name": gemm, "grid": [1, 1, 1], "block": [128, 1, 1],
                                          "shared_mem_bytes": 0, "param_sizes": [8, 8]}))
    return snapshot_from_raw(RawGraph(nodes, ((0, 1),)), meta={"name": name,
                                                               "source": "synthetic"})


@dataclass
class FakeCaptured:
    step: Step
    static: Sequence[np.ndarray]
    outputs: tuple[Any, ...]
    capacity: int
    capture_s: float = 0.0
    instantiate_s: float | None = 0.0
    pool_bytes: int | None = 0
    released: list[bool] = field(default_factory=list)
    frozen: dict[str, float] = field(default_factory=dict)  # host numbers read in capture

    def launch(self) -> None:
        STATE["replaying"] = self.frozen
        try:
            outs = as_tuple(self.step.fn(*self.static))
        finally:
            STATE["replaying"] = None
        for dst, src in zip(self.outputs, outs, strict=True):
            dst[...] = src

    def release(self) -> None:
        self.released.append(True)


class FakeAdapter:
    """The synthetic framework on synthetic device number `device` (recorded, nothing else);
    it counts its memory reads and host copies so tests can see what graphcert asked for."""

    framework = FRAMEWORK
    made: list[FakeAdapter] = []  # every adapter built, newest last

    def __init__(self, device: int = 0) -> None:
        self.device = device
        self.memory_reads = 0
        self.host_copies = 0
        FakeAdapter.made.append(self)

    def prepare(self) -> None:
        from graphcert.model.canonical import warm

        warm()

    def head(self, array: Any, n: int) -> Any:
        return array if np.ndim(array) == 0 else array[:n]

    def static_inputs(self, values: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(np.array(v, copy=True) for v in values)

    def pad_into(self, static: Sequence[Any], values: Sequence[Any], n: int,
                 fills: Sequence[Fill]) -> None:
        for dst, src, fill in zip(static, values, fills, strict=True):
            dst[:n] = src
            fill_rows(dst, n, fill)

    def call(self, step: Step, values: Sequence[Any]) -> None:
        step.fn(*values)

    def eager(self, step: Step, values: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(np.asarray(o) for o in as_tuple(step.fn(*values)))

    def capture(self, step: Step, static: Sequence[Any]) -> FakeCaptured:
        for _ in range(step.warmup):
            step.fn(*static)
        frozen: dict[str, float] = {}
        STATE["capturing"], STATE["recording"] = True, frozen
        t0 = time.perf_counter()
        try:
            outputs = tuple(np.array(o, copy=True) for o in as_tuple(step.fn(*static)))
        finally:
            STATE["capturing"] = False
        STATE["captures"] += 1
        return FakeCaptured(step, static, outputs, len(static[0]) if static else 0,
                            time.perf_counter() - t0, frozen=frozen)

    def to_numpy(self, array: Any) -> np.ndarray:
        self.host_copies += 1
        return np.asarray(array)

    def snapshot(self, captured: Any, name: str) -> GraphSnapshot:
        return synthetic_snapshot(captured.capacity, name)

    def capture_error(self, exc: BaseException) -> str | None:
        if "capturing" not in str(exc):
            return None
        return f"synthetic could not capture it: {exc}; keep host syncs out of the step"

    def synchronize(self) -> None:
        pass

    def stream_address(self) -> int:
        return 0

    def graph_memory(self) -> dict[str, int]:
        self.memory_reads += 1
        return {}


class DeviceCompareFake(FakeAdapter):
    """The synthetic framework with the optional device comparison (numpy stands in for the
    device; `verdicts` records what all_close answered). `say` forces an answer."""

    framework = FRAMEWORK_DEVICE

    def __init__(self, device: int = 0, say: bool | None | str = "compute") -> None:
        super().__init__(device)
        self.say = say
        self.verdicts: list[bool | None] = []

    def clone(self, array: Any) -> Any:
        return np.array(array, copy=True)

    def nbytes(self, array: Any) -> int:
        return int(np.asarray(array).nbytes)

    def all_close(self, got: Sequence[Any], want: Sequence[Any], rtol: float,
                  atol: float) -> bool | None:
        verdict: bool | None
        if self.say != "compute":
            verdict = self.say  # type: ignore[assignment]
        elif len(got) != len(want) or any(np.shape(g) != np.shape(w)
                                          for g, w in zip(got, want, strict=True)):
            verdict = None
        else:
            verdict = all(bool(np.isclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                          rtol=rtol, atol=atol, equal_nan=True).all())
                          for g, w in zip(got, want, strict=True))
        self.verdicts.append(verdict)
        return verdict


def register() -> None:
    register_adapter(FRAMEWORK, FakeAdapter)
    register_adapter(FRAMEWORK_DEVICE, DeviceCompareFake)


# Steps over the synthetic framework: 2-D float inputs, batched along dim 0.
WEIGHT = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)


def make_inputs(n: int) -> tuple[np.ndarray]:
    rng = np.random.default_rng(n)
    return (rng.standard_normal((n, 4)).astype(np.float32),)


def rowwise(x: np.ndarray) -> np.ndarray:
    return np.tanh(x @ WEIGHT)


def batch_mean(x: np.ndarray) -> np.ndarray:
    """Unsafe: every row depends on the mean over the whole (padded) batch."""
    return x - x.mean(axis=0, keepdims=True)


def syncs(x: np.ndarray) -> np.ndarray:
    sync_in_step()
    return x * 2.0


def safe_step() -> Step:
    register()
    import graphcert

    return graphcert.step(rowwise, make_inputs, framework=FRAMEWORK, name="rowwise",
                          rtol=1e-5, atol=1e-6)


def unsafe_step() -> Step:
    register()
    import graphcert

    return graphcert.step(batch_mean, make_inputs, framework=FRAMEWORK, name="batch_mean",
                          rtol=1e-5, atol=1e-6)


def syncing_step() -> Step:
    register()
    import graphcert

    return graphcert.step(syncs, make_inputs, framework=FRAMEWORK, name="syncs")


register()
SAFE = safe_step()
UNSAFE = unsafe_step()
SYNCING = syncing_step()
