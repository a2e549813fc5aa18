"""Loaded modules and kernels, with launch arguments packed once.

A launch needs `void**` to each argument. Packing builds one byte block holding every
argument and one pointer array into it; a PreparedLaunch keeps both alive so the timed
stream path pays only for cuLaunchKernel itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from cuda.bindings import driver

from graphcert.cuda.check import check
from graphcert.cuda.memory import DeviceBuffer
from graphcert.cuda.oplog import run
from graphcert.cuda.owned import Owned
from graphcert.cuda.types import CUfunction, CUkernel, KernelNodeParams
from graphcert.errors import GraphcertError

if TYPE_CHECKING:  # stream.py imports this module's Kernel the same way
    from graphcert.cuda.stream import Stream

Dim = tuple[int, int, int]
DimLike: TypeAlias = "int | np.integer[Any] | Sequence[int]"
"""A launch dimension as callers give it: x alone, or (x,), (x, y), (x, y, z)."""


def dim3(value: DimLike) -> Dim:
    """An int or a 1–3 tuple as a full (x, y, z)."""
    if isinstance(value, (int, np.integer)):
        return (int(value), 1, 1)
    t = tuple(int(v) for v in value) + (1, 1, 1)
    return (t[0], t[1], t[2])


class Module(Owned):
    """A cubin loaded into the current context; unload() (or destroy()) unloads it once."""

    def __init__(self, cubin: bytes, name: str = "<module>"):
        self.name = name
        self.handle = check(driver.cuModuleLoadData(cubin), f"cuModuleLoadData({name})")
        self._kernels: dict[str, Kernel] = {}

    def kernel(self, name: str) -> Kernel:
        if name not in self._kernels:
            func = check(driver.cuModuleGetFunction(self.handle, name.encode()),
                         f"cuModuleGetFunction({self.name}:{name})",
                         hint=f"declare {name} extern \"C\" __global__ in {self.name}")
            self._kernels[name] = Kernel(func, name)
        return self._kernels[name]

    def _free(self, handle: Any) -> None:
        _FUNCTIONS.clear()  # a later module may reuse these function addresses
        _LAYOUTS.clear()
        for kernel in self._kernels.values():
            kernel.func = None  # a later launch through it raises, never runs another
        check(driver.cuModuleUnload(handle), "cuModuleUnload")

    unload = Owned.destroy  # a module is unloaded: the name its callers use


_FUNCTIONS: dict[int, tuple[str, list[int]]] = {}
_LAYOUTS: dict[int, list[tuple[int, int]]] = {}


def function_identity(func: CUfunction) -> tuple[str, list[int]]:
    """Name and parameter sizes of a kernel function, read once per function (a 10,000-node
    chain has one function, not 10,000)."""
    key = int(func)
    if key not in _FUNCTIONS:
        raw = check(driver.cuFuncGetName(func), "cuFuncGetName")
        name = raw.decode() if isinstance(raw, bytes) else str(raw)
        _FUNCTIONS[key] = (name, param_sizes(func))
    name, sizes = _FUNCTIONS[key]
    return name, list(sizes)


def param_sizes(func: CUfunction) -> list[int]:
    """Sizes of a kernel's parameters as the driver reports them (driver 12.4+)."""
    return [size for _offset, size in _param_info(driver.cuFuncGetParamInfo, func)]


def param_layout(func: CUfunction | CUkernel, library_kernel: bool = False
                 ) -> list[tuple[int, int]]:
    """(offset, size) of each parameter of a CUfunction (or of a CUkernel with
    `library_kernel`), read once per function; empty where the driver cannot say."""
    key = (int(func) << 1) | int(library_kernel)
    if key not in _LAYOUTS:
        info = driver.cuKernelGetParamInfo if library_kernel else driver.cuFuncGetParamInfo
        try:
            _LAYOUTS[key] = _param_info(info, func)
        except RuntimeError:  # a driver without the call ("function not found")
            _LAYOUTS[key] = []
    return list(_LAYOUTS[key])


def _param_info(info: Callable[..., Any], func: CUfunction | CUkernel) -> list[tuple[int, int]]:
    layout = []
    for i in range(1024):
        err, offset, size = info(func, i)
        if int(err) != 0:
            break
        layout.append((int(offset), int(size)))
    return layout


class PackedArgs:
    """Argument bytes plus the pointer array the driver reads; `address` is the void**."""

    def __init__(self, values: list[bytes]):
        offsets, total = [], 0
        for v in values:
            total = (total + 7) & ~7  # 8-byte alignment for every argument
            offsets.append(total)
            total += len(v)
        self._block = np.zeros(max(total, 8), dtype=np.uint8)
        for off, v in zip(offsets, values, strict=False):
            self._block[off:off + len(v)] = np.frombuffer(v, dtype=np.uint8)
        base = self._block.ctypes.data
        self._pointers = np.array([base + off for off in offsets] or [0], dtype=np.uint64)
        self.address = int(self._pointers.ctypes.data) if values else 0
        self.count = len(values)


class Kernel:
    """A kernel function: its name, its parameter sizes, and launch helpers."""

    def __init__(self, func: CUfunction, name: str):
        self.func: CUfunction | None = func  # None once its module is unloaded
        self.name = name
        self.param_sizes = param_sizes(func)

    def pack(self, *args: object) -> PackedArgs:
        """Encode arguments by the kernel's own parameter sizes. Any value is taken: one
        that is not a DeviceBuffer, numpy scalar, bool, int, float or bytes raises
        TypeError naming the kernel and the argument (a workload's unset buffer, say)."""
        if self.param_sizes and len(args) != len(self.param_sizes):
            raise TypeError(f"kernel {self.name} takes {len(self.param_sizes)} arguments, "
                            f"got {len(args)}")
        values = []
        for i, arg in enumerate(args):
            size = self.param_sizes[i] if i < len(self.param_sizes) else None
            values.append(_encode(arg, size, self.name, i))
        return PackedArgs(values)

    def live_func(self) -> CUfunction:
        """The CUfunction; GraphcertError once its module was unloaded (RunContext.renew
        gives a new context between a workload's setups: take kernels in setup())."""
        if self.func is None:
            raise GraphcertError(
                f"kernel {self.name} belongs to a module that was unloaded (bench gives "
                "each buffer placement a new CUDA context)",
                hint="take kernels from ctx.kernel in setup(), not once for the workload's "
                     "lifetime, or bench with --placement-contexts same")
        return self.func

    def prepare(self, grid: DimLike, block: DimLike, *args: object,
                shared: int = 0) -> PreparedLaunch:
        return PreparedLaunch(self, dim3(grid), dim3(block), int(shared), self.pack(*args))

    def launch(self, stream: Stream, grid: DimLike, block: DimLike, *args: object,
               shared: int = 0) -> None:
        self.prepare(grid, block, *args, shared=shared).launch(stream)

    def node_params(self, grid: DimLike, block: DimLike, *args: object,
                    shared: int = 0) -> tuple[KernelNodeParams, PackedArgs]:
        """CUDA_KERNEL_NODE_PARAMS for an explicit kernel node; keep the PackedArgs alive."""
        g, b = dim3(grid), dim3(block)
        packed = self.pack(*args)
        p = driver.CUDA_KERNEL_NODE_PARAMS()
        p.func = self.live_func()
        p.gridDimX, p.gridDimY, p.gridDimZ = g
        p.blockDimX, p.blockDimY, p.blockDimZ = b
        p.sharedMemBytes = int(shared)
        p.kernelParams = packed.address
        p.extra = 0
        return p, packed


def _encode(arg: object, size: int | None, kernel: str, index: int) -> bytes:
    if isinstance(arg, DeviceBuffer):
        return bytes(np.uint64(arg.ptr).tobytes())
    if isinstance(arg, np.generic):
        data = arg.tobytes()
    elif isinstance(arg, bool):
        data = np.uint8(arg).tobytes() if size == 1 else np.uint32(arg).tobytes()
    elif isinstance(arg, int):
        if size == 8:
            data = (np.int64(arg) if arg < 0 else np.uint64(arg)).tobytes()
        elif size in (4, None):
            data = (np.int32(arg) if arg < 0 else np.uint32(arg)).tobytes()
        elif size == 2:
            data = np.uint16(arg).tobytes()
        else:
            data = np.uint8(arg).tobytes()
    elif isinstance(arg, float):
        data = (np.float64(arg) if size == 8 else np.float32(arg)).tobytes()
    elif isinstance(arg, (bytes, bytearray)):
        data = bytes(arg)
    else:
        raise TypeError(f"kernel {kernel} argument {index}: cannot pass {type(arg).__name__}")
    if size is not None and len(data) != size:
        raise TypeError(f"kernel {kernel} argument {index} is {size} bytes, "
                        f"got {len(data)} ({type(arg).__name__})")
    return data


@dataclass
class PreparedLaunch:
    """A launch whose arguments are packed once; launch() is one cuLaunchKernel."""

    kernel: Kernel
    grid: Dim
    block: Dim
    shared: int
    args: PackedArgs

    def launch(self, stream: Stream) -> None:
        run(self.enqueue, stream)

    def __post_init__(self) -> None:
        # Everything but the stream, resolved once: the stream path's timed loop calls
        # enqueue() and should cost what a bare cuLaunchKernel loop costs (bench compares).
        g, b = self.grid, self.block
        self._head = (self.kernel.live_func(), g[0], g[1], g[2], b[0], b[1], b[2],
                      self.shared)
        self._params = self.args.address

    def enqueue(self, stream: Stream) -> None:
        """The cuLaunchKernel itself (what a replay of the op log calls)."""
        err = driver.cuLaunchKernel(*self._head, stream.handle, self._params, 0)[0]
        if err != _SUCCESS:
            check(err, f"cuLaunchKernel({self.kernel.name})")


_SUCCESS = driver.CUresult.CUDA_SUCCESS


def bare_launches(kernel: Kernel, count: int) -> Callable[[Stream], None]:
    """An enqueue of `count` cuLaunchKernel calls of an argument-free kernel, results not
    checked: the floor bench compares the stream path's host cost with, in the same shape
    (as many launches between synchronisations)."""
    launch, func = driver.cuLaunchKernel, kernel.live_func()

    def enqueue(stream: Stream) -> None:
        handle = stream.handle
        for _ in range(count):
            launch(func, 1, 1, 1, 1, 1, 1, 0, handle, 0, 0)

    return enqueue


def time_bare_launches(kernel: Kernel, stream: Stream, count: int) -> float:
    """Seconds per cuLaunchKernel of an argument-free kernel in a bare Python loop: the floor
    the stream path's per-launch host cost is compared with."""
    import time

    launch, func, handle = driver.cuLaunchKernel, kernel.live_func(), stream.handle
    for _ in range(100):
        launch(func, 1, 1, 1, 1, 1, 1, 0, handle, 0, 0)
    stream.synchronize()
    t0 = time.perf_counter()
    for _ in range(count):
        launch(func, 1, 1, 1, 1, 1, 1, 0, handle, 0, 0)
    elapsed = time.perf_counter() - t0
    stream.synchronize()
    return elapsed / count
