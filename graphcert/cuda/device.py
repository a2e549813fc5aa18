"""Device and context selection, and what graphcert records about the machine."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from cuda.bindings import driver, nvrtc

from graphcert.cuda.check import check, load_driver
from graphcert.cuda.types import CUdevice
from graphcert.errors import InputError
from graphcert.jsontypes import JSONObject, JSONValue

A = driver.CUdevice_attribute


@dataclass(frozen=True)
class DeviceInfo:
    """What `graphcert env` shows and certificates record about one GPU."""

    index: int
    name: str
    uuid: str
    compute_capability: str
    sm_count: int
    memory_bytes: int
    clock_mhz: int | None
    memory_clock_mhz: int | None
    memory_bus_bits: int | None
    l2_bytes: int

    @property
    def peak_bandwidth_bytes_s(self) -> float | None:
        """Datasheet-style peak: 2 transfers per memory clock over the bus width."""
        if not self.memory_clock_mhz or not self.memory_bus_bits:
            return None
        return 2.0 * self.memory_clock_mhz * 1e6 * self.memory_bus_bits / 8

    def to_json(self) -> JSONObject:
        data: JSONObject = asdict(self)
        data["peak_bandwidth_bytes_s"] = self.peak_bandwidth_bytes_s
        return data


def device_count() -> int:
    load_driver()
    return int(check(driver.cuDeviceGetCount(), "cuDeviceGetCount"))


def _attr(dev: Any, attr: Any) -> int | None:
    err, value = driver.cuDeviceGetAttribute(attr, dev)
    return int(value) if int(err) == 0 else None


def _uuid(dev: Any) -> str:
    raw = bytes(check(driver.cuDeviceGetUuid(dev), "cuDeviceGetUuid").bytes)
    h = raw.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


class Device:
    """One GPU with its primary context retained and made current; release() gives it back."""

    def __init__(self, index: int = 0):
        count = device_count()
        if not 0 <= index < count:
            raise InputError(f"--device {index} does not exist: this machine has {count} "
                             f"CUDA device{'s' if count != 1 else ''}",
                             hint=f"use an index from 0 to {count - 1} (`graphcert env`)")
        self.index = index
        self.handle = check(driver.cuDeviceGet(index), "cuDeviceGet")
        self._retain()
        self.info = device_info(index)

    def _retain(self) -> None:
        """Retain the device's primary context and make it current."""
        self.context = check(driver.cuDevicePrimaryCtxRetain(self.handle),
                             "cuDevicePrimaryCtxRetain")
        self._released = False
        self.make_current()

    def make_current(self) -> None:
        """Bind the context to the calling thread (each thread that launches needs this)."""
        check(driver.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def renew(self) -> str | None:
        """Give the primary context back and retain a new one, made current: the fresh
        context a new process would get. Everything made in the old one must be freed first.
        None when renewed; the reason, with the same context kept, where something else in
        this process (a framework) still holds the primary context, which must not be reset
        under it."""
        check(driver.cuCtxSynchronize(), "cuCtxSynchronize")
        self.release()
        # The driver destroys a primary context when its last reference is released.
        _flags, active = check(driver.cuDevicePrimaryCtxGetState(self.handle),
                               "cuDevicePrimaryCtxGetState")
        self._retain()
        if active:
            return ("another user of the device's primary context in this process (a "
                    "framework or library) still holds it, so it was kept, not renewed")
        return None

    def free_memory(self) -> tuple[int, int]:
        """(free, total) bytes of device memory now."""
        free, total = check(driver.cuMemGetInfo(), "cuMemGetInfo")
        return int(free), int(total)

    def graph_memory(self) -> dict[str, int]:
        """The driver's graph-memory attributes (used/reserved, current/high)."""
        return graph_memory_attributes(self.handle)

    def synchronize(self) -> None:
        from graphcert.telemetry import COUNTERS

        COUNTERS.sync()
        check(driver.cuCtxSynchronize(), "cuCtxSynchronize")

    def release(self) -> None:
        if not self._released:
            self._released = True
            check(driver.cuDevicePrimaryCtxRelease(self.handle), "cuDevicePrimaryCtxRelease")

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def device_info(index: int) -> DeviceInfo:
    load_driver()
    dev = check(driver.cuDeviceGet(index), "cuDeviceGet")
    name = check(driver.cuDeviceGetName(256, dev), "cuDeviceGetName")
    name = name.split(b"\0", 1)[0].decode()
    clock = _attr(dev, A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
    mem_clock = _attr(dev, A.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
    return DeviceInfo(
        index=index,
        name=name,
        uuid=_uuid(dev),
        compute_capability=(f"{_attr(dev, A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)}."
                            f"{_attr(dev, A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)}"),
        sm_count=_attr(dev, A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) or 0,
        memory_bytes=int(check(driver.cuDeviceTotalMem(dev), "cuDeviceTotalMem")),
        clock_mhz=clock // 1000 if clock else None,
        memory_clock_mhz=mem_clock // 1000 if mem_clock else None,
        memory_bus_bits=_attr(dev, A.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
        l2_bytes=_attr(dev, A.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE) or 0,
    )


def driver_version_string() -> str | None:
    """The kernel module's version (e.g. 580.159.04); the driver API only gives 13000."""
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as fh:
            for word in fh.readline().split():
                if word.count(".") >= 1 and word.replace(".", "").isdigit():
                    return word
    except OSError:
        pass
    return None


def software_versions() -> JSONObject:
    """Library versions that need no GPU: cuda-bindings and NVRTC (host facts are
    graphcert.run.environment.host_facts)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        bindings = version("cuda-bindings")
    except PackageNotFoundError:
        bindings = None
    res, major, minor = nvrtc.nvrtcVersion()
    return {
        "cuda_bindings_version": bindings,
        "nvrtc_version": f"{major}.{minor}" if int(res) == 0 else None,
    }


def environment(index: int | None = None) -> JSONObject:
    """The GPU side of where a certificate was made: driver, CUDA, libraries, GPUs (needs a
    driver). One GPU's `gpu` for an index, every GPU's `gpus` for None."""
    load_driver()
    api = int(check(driver.cuDriverGetVersion(), "cuDriverGetVersion"))
    env: JSONObject = {
        "driver_version": driver_version_string(),
        "cuda_driver_api": api,
        "cuda_version": f"{api // 1000}.{(api % 1000) // 10}",
        **software_versions(),
    }
    indices = range(device_count()) if index is None else [index]
    gpus: list[JSONValue] = [device_info(i).to_json() for i in indices]
    if index is None:
        env["gpus"] = gpus
    else:
        env["gpu"] = gpus[0]
    return env


def graph_memory_attributes(device: CUdevice) -> dict[str, int]:
    """The driver's graph-memory attributes of a CUdevice (used/reserved, current/high):
    memory held by graphs' own allocation nodes, whoever captured them."""
    attrs = driver.CUgraphMem_attribute
    return {key: int(check(driver.cuDeviceGetGraphMemAttribute(device, attr),
                           "cuDeviceGetGraphMemAttribute"))
            for key, attr in (("used_current", attrs.CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT),
                              ("used_high", attrs.CU_GRAPH_MEM_ATTR_USED_MEM_HIGH),
                              ("reserved_current", attrs.CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT),
                              ("reserved_high", attrs.CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH))}
