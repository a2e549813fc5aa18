"""RunContext: what a workload gets in setup(): the device, kernels, tracked allocations."""

from __future__ import annotations

import os
import time

import numpy as np

from graphcert.cuda import nvrtc
from graphcert.cuda.device import Device
from graphcert.cuda.memory import DeviceBuffer, PinnedBuffer
from graphcert.cuda.module import Kernel, Module


class RunContext:
    """One device, its compiled modules (cached per source), and every buffer handed out.

    Buffers allocated through the context are freed by `release_buffers()` (after each
    capacity class) and `close()`, so a workload that forgets one does not leak it.
    """

    def __init__(self, device: Device, seed: int = 0):
        self.device = device
        self.seed = seed
        self.arch = nvrtc.arch_for(device.info.compute_capability)
        self._modules: dict[str, Module] = {}
        self._cubins: dict[str, tuple[bytes, str]] = {}  # loaded again after renew()
        self._buffers: list[DeviceBuffer | PinnedBuffer] = []
        self.builds: list[nvrtc.Build] = []
        self.compile_s = 0.0
        self.generation = 0  # how many times renew() gave this context a new one

    @classmethod
    def open(cls, device_index: int = 0, seed: int = 0) -> RunContext:
        return cls(Device(device_index), seed)

    def module(self, source: str | os.PathLike[str]) -> Module:
        """The module for a kernel source (a name under kernels/ or a path), built once."""
        key = str(source)
        if key not in self._modules:
            if key not in self._cubins:
                t0 = time.perf_counter()
                build = nvrtc.build(source, self.arch)
                self._cubins[key] = (build.cubin, build.source.name)
                self.compile_s += time.perf_counter() - t0
                self.builds.append(build)
            self._modules[key] = Module(*self._cubins[key])
        return self._modules[key]

    def kernel(self, source: str | os.PathLike[str], name: str) -> Kernel:
        return self.module(source).kernel(name)

    def alloc(self, nbytes: int) -> DeviceBuffer:
        buf = DeviceBuffer(nbytes)
        self._buffers.append(buf)
        return buf

    def upload(self, array: np.ndarray) -> DeviceBuffer:
        """A tracked device buffer holding a copy of `array`."""
        buf = self.alloc(array.nbytes)
        buf.upload(array)
        return buf

    def pinned(self, nbytes: int, *, mapped: bool = False) -> PinnedBuffer:
        buf = PinnedBuffer(nbytes, mapped=mapped)
        self._buffers.append(buf)
        return buf

    def rng(self, salt: int = 0) -> np.random.Generator:
        """A generator seeded from the context seed, so inputs are reproducible."""
        return np.random.default_rng([self.seed, salt])

    def free_memory(self) -> int:
        return self.device.free_memory()[0]

    def release_buffers(self) -> None:
        while self._buffers:
            self._buffers.pop().free()

    def _unload_modules(self) -> None:
        for module in self._modules.values():
            module.unload()
        self._modules.clear()

    def renew(self) -> str | None:
        """Free every buffer and module, give the primary context back and take a new one
        (Device.renew): modules load again from their cubins when next asked for. Kernels,
        buffers, streams and events made before are invalid after. None when renewed, else
        the reason the same context was kept."""
        self.release_buffers()
        self._unload_modules()
        reason = self.device.renew()
        if reason is None:
            self.generation += 1
        return reason

    def close(self) -> None:
        self.release_buffers()
        self._unload_modules()
        self.device.release()

    def __enter__(self) -> RunContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
