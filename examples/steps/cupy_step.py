"""A CuPy step: a row-wise affine map and tanh, written into a preallocated output.

    graphcert verify examples/steps/cupy_step.py:STEP --classes 1,2,4,8,16,32,64
    graphcert bench  examples/steps/cupy_step.py:STEP --classes 8,64
    python examples/steps/cupy_step.py

CuPy may not allocate while a stream captures, so make_inputs makes the output buffer too and
every operation writes with out=; graphcert captures on a non-blocking stream. CuPy is
imported only when the step runs.
"""

from __future__ import annotations

from typing import Any

import graphcert

WIDTH = 1024


def cupy_step(x: Any, out: Any) -> Any:
    """out = tanh(1.5 x + 0.25), element by element (so row by row)."""
    import cupy as cp

    cp.multiply(x, 1.5, out=out)
    cp.add(out, 0.25, out=out)
    cp.tanh(out, out=out)
    return out


def make_inputs(n: int) -> tuple[Any, Any]:
    """n rows of input, seeded by n, and the output they are written into."""
    import cupy as cp

    x = cp.random.default_rng(3000 + n).standard_normal((n, WIDTH), dtype=cp.float32)
    return x, cp.zeros_like(x)


STEP = graphcert.step(cupy_step, make_inputs, framework="cupy", rtol=1e-6, atol=1e-6,
                      name="cupy_step")

if __name__ == "__main__":
    result = graphcert.verify_step(STEP, "1,2,4,8,16,32,64")
    print(f"cupy_step: {result.verdict.status.value} ({len(result.classes)} buckets)")
    for why in result.verdict.reasons:
        print("  ", why)
