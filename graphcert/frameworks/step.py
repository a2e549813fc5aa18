"""The framework step declaration: a user's PyTorch, CuPy or cuda.core callable and its input
maker, which graphcert captures with the framework's own capture once per bucket and replays
with the inputs padded up to the bucket, as serving engines do.

A step is declared with `graphcert.step(fn, make_inputs, ...)`; `file.py:NAME` or
`module:NAME` naming one is loaded like any workload. Declaring one imports no framework: its
adapter (graphcert.frameworks.adapters) is built only when the step runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from graphcert.errors import InputError
from graphcert.frameworks.adapters import FRAMEWORKS, registered
from graphcert.frameworks.padding import PadSpec, check_spec

if TYPE_CHECKING:
    import numpy as np

Rows = Callable[["np.ndarray", int], "np.ndarray"]


def first_rows(output: np.ndarray, n: int) -> np.ndarray:
    """The default `rows`: the first n rows of an output along dim 0 (a 0-d output whole)."""
    return output if output.ndim == 0 else output[:n]


@dataclass(frozen=True)
class Step:
    """A framework step: `fn(*inputs)` (cuda.core: `fn(stream, *arrays)`) and `make_inputs(n)`,
    the inputs for batch size n (each batched along dim 0). Built by `graphcert.step`."""

    fn: Callable[..., object]
    make_inputs: Callable[[int], object]
    framework: str = "torch"
    rows: Rows = first_rows
    rtol: float = 1e-3
    atol: float = 1e-3
    name: str = "step"
    pad_value: PadSpec = 0.0
    warmup: int = 3
    description: str = "framework step"
    kernel_files: tuple[str, ...] = field(default=())
    # What verify pads with to tell whether a failing bucket depends on its padding (None:
    # NaN for floating inputs, the real rows repeated for the others).
    poison: PadSpec | None = None


def step(fn: Callable[..., object], make_inputs: Callable[[int], object], *,
         framework: str = "torch", rows: Rows | None = None, rtol: float = 1e-3,
         atol: float = 1e-3, name: str | None = None, pad_value: PadSpec = 0.0,
         warmup: int = 3, description: str | None = None,
         poison: PadSpec | None = None) -> Step:
    """Declare a step graphcert captures per bucket with the framework's own capture.

    `fn(*inputs)` runs the step (cuda.core: `fn(stream, *arrays)`, launching on `stream`, a
    cuda.core Stream or GraphBuilder, and returning the arrays it wrote). `make_inputs(n)` returns
    the inputs for batch size n (a tuple, or one array), each batched along dim 0; weights
    belong in fn's closure. `rows(output, n)` picks the part of an output (as numpy) that
    belongs to n (default: its first n rows). Padded rows hold `pad_value`: one number, a
    tuple with one per input, or a dict {input position: number} (others 0.0). The replayed
    graph must match the eager call at n within `rtol`/`atol`. `warmup` eager calls at the
    bucket's size precede each capture (on a side stream, as PyTorch requires). `poison`
    (same forms; default NaN for floating inputs, the real rows repeated for the others) is
    what verify pads with to tell whether a failing bucket depends on its padding."""
    if framework not in FRAMEWORKS and framework not in registered():
        raise InputError(f"step framework {framework!r} is not one graphcert captures",
                         hint=f"use one of {', '.join(FRAMEWORKS)}")
    if not callable(fn) or not callable(make_inputs):
        raise InputError("graphcert.step takes the step's callable and a make_inputs(n) "
                         "callable", hint="graphcert.step(fn, make_inputs, framework=...)")
    if not all(math.isfinite(t) and t >= 0 for t in (rtol, atol)) or warmup < 0:
        raise InputError(f"rtol and atol must be finite numbers >= 0 and warmup >= 0 (got "
                         f"rtol={rtol!r}, atol={atol!r}, warmup={warmup!r})")
    pad = check_spec(pad_value, "pad_value")
    bad = check_spec(poison, "poison", finite=False) if poison is not None else None
    label = name or getattr(fn, "__name__", None) or "step"
    return Step(fn, make_inputs, framework, rows or first_rows, float(rtol), float(atol),
                str(label), pad, int(warmup),
                description or f"{framework} step {label}, captured per bucket and padded",
                poison=bad)


def is_step(obj: object) -> bool:
    """True for a declared framework step."""
    return isinstance(obj, Step)


__all__ = ["Rows", "Step", "first_rows", "is_step", "step"]
