"""A cuda.core GraphBuilder graph (three kernel launches in a row) read by graphcert.

    python examples/sources/cuda_core_graph.py

graphcert reads the builder's graph definition after `end_building()` (before or after
`complete()`); the executable Graph that `complete()` returns cannot be read (the driver
does not list an executable graph's nodes).
"""

from __future__ import annotations

from typing import Any

import graphcert

SOURCE = r"""
extern "C" __global__ void scale(float* x, float a, unsigned int n) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i];
}
"""
BLOCK = 256


def capture(n: int = 1 << 16, device: int = 0) -> tuple[Any, list[Any]]:
    """A finished GraphBuilder: scale(x), then scale each half of x; and what it uses."""
    import numpy as np
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch

    dev = Device(device)
    dev.set_current()
    options = ProgramOptions(arch=f"sm_{dev.arch}", std="c++17")
    kernel = Program(SOURCE, "c++", options).compile("cubin").get_kernel("scale")
    warm = dev.create_stream()  # allocate and load the kernel outside the graph
    buf = dev.allocate(4 * n, stream=warm)  # cuda.core 1.2 asks which stream orders it
    ptr = int(buf.handle)  # cuda.core passes Python ints to kernels as pointers
    half = n // 2
    whole = LaunchConfig(grid=-(-n // BLOCK), block=BLOCK)
    part = LaunchConfig(grid=-(-half // BLOCK), block=BLOCK)
    launch(warm, whole, kernel, ptr, np.float32(1.0), np.uint32(n))
    warm.sync()

    builder = dev.create_graph_builder()
    builder.begin_building()
    launch(builder, whole, kernel, ptr, np.float32(2.0), np.uint32(n))
    launch(builder, part, kernel, ptr, np.float32(0.5), np.uint32(half))
    launch(builder, part, kernel, ptr + 4 * half, np.float32(0.5), np.uint32(half))
    builder.end_building()
    return builder, [kernel, buf, warm]


def main() -> None:
    builder, keep = capture()
    s = graphcert.snapshot(builder, name="cuda-core-fork")
    print(f"{s.counts()} edges {len(s.edges)} topology {s.topology_hash[:12]}")
    graph = builder.complete()  # still readable through the builder afterwards
    assert graphcert.snapshot(builder).topology_hash == s.topology_hash
    graph.close()
    builder.close()
    del keep


if __name__ == "__main__":
    main()
