"""A CuPy stream capture (y = a * x + b, then clip) read by graphcert.

    python examples/sources/cupy_graph.py

CuPy must not allocate while a stream captures: every output is made before
`begin_capture()` and written with `out=`; a first, uncaptured pass loads the kernels.
"""

from __future__ import annotations

from typing import Any

import graphcert


def capture(n: int = 1 << 16) -> tuple[Any, list[Any]]:
    """A cupy.cuda.Graph of three elementwise kernels, and the arrays it uses."""
    import cupy as cp

    x = cp.linspace(-4, 4, n, dtype=cp.float32)
    y = cp.empty_like(x)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        for record in (False, True):
            if record:
                stream.begin_capture()
            cp.multiply(x, 1.5, out=y)
            cp.add(y, 0.25, out=y)
            cp.clip(y, -1.0, 1.0, out=y)
            if not record:
                stream.synchronize()
        graph = stream.end_capture()
    return graph, [x, y, stream]


def main() -> None:
    graph, keep = capture()
    s = graphcert.snapshot(graph, name="cupy-axpb")
    print(f"{s.counts()} topology {s.topology_hash[:12]} shape {s.shape_hash[:12]}")
    for node in s.nodes:
        print(f"  {node.kind.value} {node.attrs.get('name')} grid {node.attrs.get('grid')}")
    del keep


if __name__ == "__main__":
    main()
