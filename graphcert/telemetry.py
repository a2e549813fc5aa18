"""Host-side telemetry: synchronisations and bytes copied between host and device, counted in
graphcert's own wrappers in graphcert.cuda (Stream/Event/context synchronize, DeviceBuffer
copies). Pure counting, no CUDA: run/ reads a window of it around each bench run.

Work graphcert does not wrap (CuPy, torch, cuda.core calls inside a workload) is not counted;
the counts are a floor for such workloads.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class Counters:
    """Running totals since the process started (mutable; read through `window`)."""

    syncs: int = 0
    htod_bytes: int = 0
    dtoh_bytes: int = 0
    htod_copies: int = 0
    dtoh_copies: int = 0

    def sync(self) -> None:
        self.syncs += 1

    def htod(self, nbytes: int) -> None:
        self.htod_copies += 1
        self.htod_bytes += int(nbytes)

    def dtoh(self, nbytes: int) -> None:
        self.dtoh_copies += 1
        self.dtoh_bytes += int(nbytes)

    def snapshot(self) -> dict[str, int]:
        return {"syncs": self.syncs, "htod_bytes": self.htod_bytes,
                "dtoh_bytes": self.dtoh_bytes, "htod_copies": self.htod_copies,
                "dtoh_copies": self.dtoh_copies}


COUNTERS = Counters()


@contextmanager
def window() -> Iterator[dict[str, int]]:
    """Counts made inside the block: the yielded dict is filled in when the block ends."""
    before = COUNTERS.snapshot()
    counts: dict[str, int] = {}
    try:
        yield counts
    finally:
        after = COUNTERS.snapshot()
        counts.update({k: after[k] - before[k] for k in after})
