"""The PyTorch adapter for framework steps; it imports torch when built, so importing this module
does not.

PyTorch: warm up on a side stream, then `torch.cuda.graph` into a CUDAGraph(keep_graph=True)
with a private pool (`torch.cuda.graph_pool_handle()`), as PyTorch's CUDA Graphs notes say.
"""

from __future__ import annotations

import inspect
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphcert.apicheck import as_tuple
from graphcert.errors import FrameworkMissing
from graphcert.frameworks.adapters import check_device, native
from graphcert.frameworks.array_adapter import ArrayAdapter
from graphcert.frameworks.padding import Fill
from graphcert.frameworks.step import Step


@dataclass
class TorchCaptured:
    graph: Any
    outputs: tuple[object, ...]
    capture_s: float
    instantiate_s: float | None
    pool_bytes: int | None
    keep: list[Any] = field(default_factory=list)  # the static inputs the graph reads
    graphcert_s: float = 0.0  # graphcert's own part of capture(): reading the pool's bytes
    pool: Any = None  # the private pool's handle (torch.cuda.graph_pool_handle())

    def launch(self) -> None:
        self.graph.replay()

    def release(self) -> None:
        self.graph.reset()
        self.keep.clear()


class TorchAdapter(ArrayAdapter):
    """PyTorch: tensors on CUDA device `device` (made the current one, so a step's
    `device="cuda"` lands there)."""

    _label = "PyTorch"
    _capture_advice = ("the step synchronises with the host during capture (.item(), .cpu(), "
                       ".tolist(), printing a tensor, torch.cuda.synchronize(), data-dependent "
                       "shapes such as nonzero()): keep host reads out of the step")

    framework = "torch"
    # What the allocator's snapshot takes (prepare() asks torch): the graph's pool alone, and
    # no allocation traces. Until then, the whole snapshot.
    _by_pool = False
    _lean: dict[str, bool] = {}

    def __init__(self, device: int = 0) -> None:
        try:
            import torch
        except ImportError as exc:
            raise FrameworkMissing(f"PyTorch is not installed ({exc})",
                                   hint="pip install torch (a CUDA build)") from None
        if torch.version.cuda is None or not torch.cuda.is_available():
            raise FrameworkMissing(f"PyTorch {torch.__version__} has no CUDA device to use",
                                   hint="install a CUDA build of PyTorch on a GPU machine")
        check_device("PyTorch", device, torch.cuda.device_count())
        torch.cuda.set_device(device)
        self.device = device
        self.torch = torch
        self._array = torch.Tensor
        self._numpy_floats = (torch.float16, torch.float32, torch.float64)

    def prepare(self) -> None:
        super().prepare()
        # The allocator's first snapshot costs ~25 ms (one-time); pool_bytes reads it per
        # bucket, so pay it here, not in the first bucket. Where torch can, the per-bucket
        # read takes only the graph's pool and no allocation traces.
        snap = self.torch.cuda.memory_snapshot
        params = inspect.signature(snap).parameters
        self._lean = {"include_traces": False} if "include_traces" in params else {}
        self._by_pool = "mempool_id" in params
        snap(**self._lean)

    def clone(self, array: object) -> object:
        return native(array).detach().clone()

    def nbytes(self, array: object) -> int:
        t = native(array)
        return int(t.numel() * t.element_size())

    def _close(self, g: Any, w: Any, rtol: float, atol: float) -> Any:
        """Floats upcast to float64 and torch.isclose (numpy's formula, equal_nan)."""
        torch = self.torch
        if g.dtype.is_floating_point or w.dtype.is_floating_point:
            return torch.isclose(g.double(), w.double(), rtol=rtol, atol=atol,
                                 equal_nan=True).all()
        return torch.eq(g, w).all()

    def _unlike(self, g: Any, w: Any) -> bool:
        return bool(g.is_complex() or w.is_complex() or g.device != w.device)

    def _stack(self, flags: list[Any]) -> Any:
        return self.torch.stack(flags)

    def static_inputs(self, values: Sequence[object]) -> tuple[object, ...]:
        return tuple(native(v).clone() for v in values)

    def head(self, array: object, n: int) -> object:
        # narrow(): the same view as array[:n] at a fraction of indexing's cost per call
        t = native(array)
        if t.ndim == 0 or n >= t.shape[0]:
            return t
        return t.narrow(0, 0, n)

    def pad_into(self, static: Sequence[object], values: Sequence[object], n: int,
                 fills: Sequence[Fill]) -> None:
        for dst, src, fill in zip(map(native, static), values, fills, strict=True):
            native(self.head(dst, n)).copy_(src)
            rest = dst.shape[0] - n
            if rest <= 0:
                continue
            tail = dst.narrow(0, n, rest)
            if fill is None and n > 0:  # the real rows repeated
                rows = self.torch.arange(rest, device=dst.device) % n
                tail.copy_(dst.narrow(0, 0, n).index_select(0, rows))
            else:
                tail.fill_(0 if fill is None else fill)

    def call(self, step: Step, values: Sequence[object]) -> None:
        with self.torch.no_grad():
            step.fn(*values)

    def eager(self, step: Step, values: Sequence[object]) -> tuple[object, ...]:
        with self.torch.no_grad():
            out = as_tuple(step.fn(*values))
        self.torch.cuda.synchronize()
        return out

    def capture(self, step: Step, static: Sequence[object]) -> TorchCaptured:
        torch = self.torch
        with torch.no_grad():
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # cuBLAS handles and workspaces: not captured
                for _ in range(step.warmup):
                    step.fn(*static)
            torch.cuda.current_stream().wait_stream(side)
            torch.cuda.synchronize()
            pool = torch.cuda.graph_pool_handle()
            t0 = time.perf_counter()
            reserved = self._reserved()
            own_s = time.perf_counter() - t0
            graph = torch.cuda.CUDAGraph(keep_graph=True)  # kept so graphcert can read it
            t0 = time.perf_counter()
            current = torch.cuda.current_stream()
            try:
                with torch.cuda.graph(graph, pool=pool):
                    outputs = as_tuple(step.fn(*static))
            except BaseException:
                self._undo_failed_capture(graph, pool, current)
                raise
            torch.cuda.synchronize()
            capture_s = time.perf_counter() - t0
        instantiate_s = None
        if hasattr(graph, "instantiate"):
            t0 = time.perf_counter()
            graph.instantiate()
            torch.cuda.synchronize()
            instantiate_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        pool_bytes = self._pool_bytes(pool, self._reserved() - reserved)
        return TorchCaptured(graph, outputs, capture_s, instantiate_s, pool_bytes, list(static),
                             own_s + time.perf_counter() - t0, pool)

    def _undo_failed_capture(self, graph: Any, pool: Any, current: Any) -> None:
        """Leave torch as it was before a capture that failed, so the next bucket (and the
        user's own code) runs. When capture_end raises (a step that synchronises invalidates
        the capture), torch.cuda.graph's __exit__ stops there: its capture stream stays the
        current one, the allocator keeps routing into the graph's pool (and defers freeing
        blocks used on other streams until no capture is underway), and the default CUDA
        generator stays in capture mode, so the next torch.randn(device="cuda") raised
        "Offset increment outside graph capture encountered unexpectedly" on an H100
        (torch 2.11). Each step is best effort: the capture's own error is the one raised."""
        torch = self.torch
        torch.cuda.set_stream(current)
        try:
            graph.pool()  # raises unless capture_end got to its end (the step's own error)
            return  # the capture ended: torch.cuda.graph undid all, graph.reset() frees it
        except Exception:  # noqa: BLE001 - the capture did not end: undo what it left
            pass
        # Private, hence getattr: torch has no public way to end a failed capture's pool.
        end = (getattr(torch._C, "_cuda_endAllocateToPool", None)
               or getattr(torch._C, "_cuda_endAllocateCurrentStreamToPool", None))
        release = getattr(torch._C, "_cuda_releasePool", None)
        for undo in (end, release):
            if undo is not None:
                try:
                    undo(self.device, pool)
                except Exception:  # noqa: BLE001 - capture_end got that far, or never began
                    pass
        try:
            graph.reset()
        except Exception:  # noqa: BLE001 - nothing of it to free
            pass
        self._reset_generator()

    def _reset_generator(self) -> None:
        """Take the default generator out of capture mode with an empty capture: capture_begin
        puts every generator registered to a graph (the default one always) in capture mode
        before the capture starts, and only a capture_end that succeeds takes them out. The
        generator's seed and offset are left as they were (an empty graph draws nothing)."""
        torch = self.torch
        try:
            with torch.cuda.stream(torch.cuda.Stream()), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "The CUDA Graph is empty": it is meant to be
                repair = torch.cuda.CUDAGraph(keep_graph=True)
                repair.capture_begin()
                repair.capture_end()
                repair.reset()
        except Exception:  # noqa: BLE001 - the next bucket says what is left wrong
            pass

    def _reserved(self) -> int:
        """The caching allocator's reserved bytes on the current device. The nested stats
        are read as they are: memory_reserved() flattens every statistic first (~0.1 ms)."""
        try:
            stats = self.torch.cuda.memory_stats_as_nested_dict()
            return int(stats["reserved_bytes"]["all"]["current"])
        except (AttributeError, KeyError, TypeError):
            return int(self.torch.cuda.memory_reserved())

    def _pool_bytes(self, pool: Any, reserved_delta: int) -> int | None:
        """Bytes of the segments in the graph's private pool (the allocator's snapshot), or
        the growth of reserved memory over the capture where the snapshot does not say.
        Not the growth alone: a pool released by an earlier bucket leaves its segments
        cached, and a later pool takes them without reserving more (an H100 run read 0
        for buckets 1..32 that way)."""
        try:
            pool_only = {"mempool_id": pool} if self._by_pool else {}
            segments = self.torch.cuda.memory_snapshot(**pool_only, **self._lean)
            mine = [s for s in segments if tuple(s.get("segment_pool_id", ())) == tuple(pool)]
            if mine:
                return int(sum(s["total_size"] for s in mine))
        except Exception:  # noqa: BLE001 - a figure; fall back to the delta
            pass
        return max(int(reserved_delta), 0)

    def to_numpy(self, array: object) -> np.ndarray:
        tensor = native(array).detach()
        if tensor.is_complex() or tensor.dtype in self._numpy_floats:
            return np.asarray(tensor.cpu().numpy())  # no conversion kernel on the device
        if tensor.dtype.is_floating_point:  # bfloat16, float8: numpy has no such dtype
            tensor = tensor.float()
        return np.asarray(tensor.cpu().numpy())

    def synchronize(self) -> None:
        self.torch.cuda.synchronize()

    def stream_address(self) -> int:
        # eager calls and CUDAGraph.replay() both run on the current stream
        return int(self.torch.cuda.current_stream().cuda_stream)
