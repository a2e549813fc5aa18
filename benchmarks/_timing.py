"""The benchmark scripts' shared timer (stdlib only; imported as a sibling module, since
`python benchmarks/NAME.py` puts this folder first on sys.path)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_s(fn: Callable[[], object], repeat: int,
             before: Callable[[], object] | None = None) -> float:
    """Median seconds of `repeat` calls of fn(), each after an untimed before() where given
    (a device synchronize, a replay)."""
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
