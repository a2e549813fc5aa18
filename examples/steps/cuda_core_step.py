"""A cuda.core step: one NVRTC-compiled kernel, y = 2x + 1 over the whole (padded) batch,
captured by a GraphBuilder.

    graphcert verify examples/steps/cuda_core_step.py:STEP --classes 1,2,4,8,16,32,64
    graphcert bench  examples/steps/cuda_core_step.py:STEP --classes 8,64
    python examples/steps/cuda_core_step.py

A cuda.core step is fn(stream, *arrays): `stream` is a cuda.core Stream when graphcert runs it
eagerly and a GraphBuilder while it captures, so `launch(stream, ...)` serves both. The
arrays are device copies graphcert made of the numpy arrays make_inputs returned (the output
too: nothing is allocated during capture); `.ptr` is what a kernel takes, `.shape` the
bucket's size once captured. cuda.core is imported only when the step runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import graphcert

WIDTH = 512
BLOCK = 256
SOURCE = r"""
extern "C" __global__ void affine(const float* x, float* y, unsigned int count) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) y[i] = 2.0f * x[i] + 1.0f;
}
"""
_kernel: list[Any] = []


def kernel() -> Any:
    """The kernel, compiled once for the current device."""
    if not _kernel:
        from cuda.core import Device, Program, ProgramOptions

        dev = Device()
        options = ProgramOptions(arch=f"sm_{dev.arch}", std="c++17")
        _kernel.append(Program(SOURCE, "c++", options).compile("cubin").get_kernel("affine"))
    return _kernel[0]


def core_step(stream: Any, x: Any, y: Any) -> Any:
    """Launch y = 2x + 1 over every element of x (the bucket's rows, once captured)."""
    from cuda.core import LaunchConfig, launch

    count = x.size
    config = LaunchConfig(grid=max(-(-count // BLOCK), 1), block=BLOCK)
    launch(stream, config, kernel(), x.ptr, y.ptr, np.uint32(count))
    return y


def make_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """n rows (numpy, seeded by n) and the output rows, zero."""
    x = np.random.default_rng(4000 + n).standard_normal((n, WIDTH)).astype(np.float32)
    return x, np.zeros_like(x)


STEP = graphcert.step(core_step, make_inputs, framework="cuda.core", rtol=1e-6, atol=1e-6,
                      name="cuda_core_step")

if __name__ == "__main__":
    result = graphcert.verify_step(STEP, "1,2,4,8,16,32,64")
    print(f"cuda_core_step: {result.verdict.status.value} ({len(result.classes)} buckets)")
    for why in result.verdict.reasons:
        print("  ", why)
