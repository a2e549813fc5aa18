"""`chain`: N near-empty kernels in a row (`chain[kernels=1000]`), the pure launch-overhead
workload.

Kernel `step` is one thread storing step + 1 into marks[step] (a store only: as cheap as an
empty kernel, see chain.cu), so `marks` equals 1..N exactly when every launch ran. setup()
poisons the marks, so a launch that did not run shows. The work does not depend on n or
the capacity: every class gives the same graph, and no kernel parameter carries n
(`size_params` is empty).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphcert.workloads.base import SizeParam, Tolerance

if TYPE_CHECKING:
    from graphcert.cuda.context import RunContext
    from graphcert.cuda.memory import DeviceBuffer
    from graphcert.cuda.module import PreparedLaunch
    from graphcert.cuda.stream import Stream

CHAIN_SOURCE = "chain.cu"
MAX_KERNELS = 100_000


class Chain:
    """N one-thread kernels; output `marks` must be 1..N."""

    name = "chain"
    description = "N empty kernels: pure launch overhead"
    kernel_files: tuple[str, ...] = (CHAIN_SOURCE,)
    size_params: tuple[SizeParam, ...] = ()
    tolerance = Tolerance()

    def __init__(self, kernels: int = 16):
        if not 1 <= int(kernels) <= MAX_KERNELS:
            raise ValueError(f"kernels must be in 1..{MAX_KERNELS}, got {kernels}")
        self.kernels = int(kernels)
        self._marks: DeviceBuffer | None = None
        self._launches: list[PreparedLaunch] = []

    def predict(self, capacity: int) -> dict[str, int]:
        return {"kernel": self.kernels}

    def bytes_needed(self, capacity: int) -> int:
        return 4 * self.kernels

    def setup(self, ctx: RunContext, capacity: int) -> None:
        self._marks = ctx.upload(np.full(self.kernels, 0xDEADBEEF, dtype=np.uint32))
        mark = ctx.kernel(CHAIN_SOURCE, "chain_mark")
        # Packed once here, so a timed stream loop pays for cuLaunchKernel and nothing else.
        self._launches = [mark.prepare(1, 1, self._marks, np.uint32(step))
                          for step in range(self.kernels)]

    def record(self, stream: Stream, n: int) -> None:
        for launch in self._launches:
            launch.launch(stream)

    def outputs(self, n: int) -> dict[str, np.ndarray]:
        assert self._marks is not None
        return {"marks": self._marks.download(np.uint32, self.kernels)}

    def reference(self, n: int) -> dict[str, np.ndarray]:
        return {"marks": np.arange(1, self.kernels + 1, dtype=np.uint32)}

    def teardown(self) -> None:
        if self._marks is not None:
            self._marks.free()
        self._marks = None
        self._launches = []
