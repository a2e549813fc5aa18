"""A stand-in for RunContext on the host, for building the built-ins' inputs and references
without a GPU (tests and benchmarks/reference_speed.py): seeded generators as the real context
has; device allocations, uploads and kernels are dropped."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

_ptrs = itertools.count(1 << 20, 4096)


class _Buffer:
    def __init__(self, nbytes: int):
        self.ptr = next(_ptrs)
        self._host = np.zeros(max(nbytes, 16), dtype=np.uint8)

    def array(self, dtype: Any, count: int | None = None) -> np.ndarray:
        a = self._host.view(dtype)
        return a if count is None else a[:count]

    def free(self) -> None:
        pass


class _Kernel:
    def prepare(self, *args: Any, **kwargs: Any) -> None:
        return None


class HostContext:
    """What setup() needs from a RunContext, on the host: seeded generators; uploads dropped."""

    def __init__(self, seed: int):
        self.seed = seed

    def rng(self, salt: int = 0) -> np.random.Generator:
        return np.random.default_rng([self.seed, salt])

    def alloc(self, nbytes: int) -> _Buffer:
        return _Buffer(16)

    def upload(self, array: np.ndarray) -> _Buffer:
        return _Buffer(16)

    def pinned(self, nbytes: int, *, mapped: bool = False) -> _Buffer:
        return _Buffer(nbytes)

    def kernel(self, source: str, name: str) -> _Kernel:
        return _Kernel()
