"""Renewing the primary context on CPU, with the driver replaced by a fake that keeps the
primary context's reference count the way the CUDA driver documents it (released to zero, it
is destroyed; retained again, a new one is made). No GPU; nothing here is a recording."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from graphcert.cuda import context as context_mod
from graphcert.cuda import device as device_mod
from graphcert.cuda.context import RunContext
from graphcert.cuda.device import Device


@dataclass
class FakeDriver:
    """cuDevicePrimaryCtx* with a reference count; each new primary context a new handle."""

    held: int = 0  # references held by others than the Device under test
    count: int = 0
    made: int = 0
    current: int | None = None
    log: list[str] = field(default_factory=list)

    def cuDevicePrimaryCtxRetain(self, dev: Any) -> tuple[int, int]:
        if self.count == 0:
            self.made += 1
        self.count += 1
        return 0, 100 + self.made

    def cuDevicePrimaryCtxRelease(self, dev: Any) -> tuple[int]:
        self.count -= 1
        self.log.append("release")
        return (0,)

    def cuDevicePrimaryCtxGetState(self, dev: Any) -> tuple[int, int, int]:
        return 0, 0, int(self.count > 0)

    def cuCtxSetCurrent(self, ctx: int) -> tuple[int]:
        self.current = ctx
        return (0,)

    def cuCtxSynchronize(self) -> tuple[int]:
        self.log.append("synchronize")
        return (0,)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeDriver:
    fake = FakeDriver()
    monkeypatch.setattr(device_mod, "driver", fake)
    return fake


def _device(fake: FakeDriver) -> Device:
    dev = Device.__new__(Device)  # __init__ asks the real driver for the device count
    dev.index, dev.handle, dev._released = 0, "dev0", False
    dev.context = fake.cuDevicePrimaryCtxRetain(dev.handle)[1]
    fake.count += fake.held
    dev.make_current()
    return dev


def test_renewal_gives_a_new_current_context(fake: FakeDriver) -> None:
    dev = _device(fake)
    first = dev.context
    assert dev.renew() is None
    assert dev.context != first and fake.current == dev.context and fake.made == 2
    assert fake.count == 1 and fake.log == ["synchronize", "release"]


def test_a_context_someone_else_holds_is_kept_with_the_reason(fake: FakeDriver) -> None:
    fake.held = 1  # e.g. CuPy or PyTorch retained the primary context too
    dev = _device(fake)
    first = dev.context
    reason = dev.renew()
    assert reason is not None and "still holds it" in reason
    assert dev.context == first and fake.current == first and fake.made == 1
    assert fake.count == 2  # our reference is back, theirs untouched


class FakeModule:
    loads: list[bytes] = []
    log: list[str] = []

    def __init__(self, cubin: bytes, name: str):
        FakeModule.loads.append(cubin)
        self.name = name
        self.unloaded = False

    def kernel(self, name: str) -> str:
        return f"{self.name}:{name}"

    def unload(self) -> None:
        self.unloaded = True
        FakeModule.log.append("unload")


class FakeBuffer:
    def __init__(self, log: list[str]):
        self.log = log

    def free(self) -> None:
        self.log.append("free")


@dataclass
class FakeBuild:
    cubin: bytes
    source: Any


def test_modules_load_again_from_their_cubins_after_a_renewal(
        fake: FakeDriver, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []

    def build(source: str, arch: str) -> FakeBuild:
        compiled.append(source)
        return FakeBuild(b"cubin-" + source.encode(), type("S", (), {"name": source})())

    FakeModule.loads, FakeModule.log = [], fake.log
    monkeypatch.setattr(context_mod, "Module", FakeModule)
    monkeypatch.setattr(context_mod.nvrtc, "build", build)
    ctx = RunContext.__new__(RunContext)  # without Device.__init__ and nvrtc.arch_for
    ctx.device, ctx.seed, ctx.arch = _device(fake), 0, "sm_90"
    ctx._modules, ctx._cubins, ctx._buffers, ctx.builds = {}, {}, [], []
    ctx.compile_s, ctx.generation = 0.0, 0
    before = ctx.module("a.cu")
    ctx._buffers.append(FakeBuffer(fake.log))  # type: ignore[arg-type]
    assert ctx.renew() is None and ctx.generation == 1
    assert isinstance(before, FakeModule) and before.unloaded
    # everything made in the old context is gone before it is released
    assert fake.log == ["free", "unload", "synchronize", "release"]
    after = ctx.module("a.cu")
    assert after is not before and compiled == ["a.cu"]  # loaded again, not compiled again
    assert FakeModule.loads == [b"cubin-a.cu", b"cubin-a.cu"] and len(ctx.builds) == 1
    fake.count += 1  # another library retains the primary context now
    assert ctx.renew() is not None and ctx.generation == 1  # kept: not a new generation


def test_a_kernel_of_an_unloaded_module_refuses_to_launch(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    from graphcert.cuda import module as module_mod
    from graphcert.errors import GraphcertError

    monkeypatch.setattr(module_mod.driver, "cuModuleUnload", lambda handle: (0,))
    mod = module_mod.Module.__new__(module_mod.Module)  # no cuModuleLoadData without a GPU
    kernel = module_mod.Kernel.__new__(module_mod.Kernel)
    kernel.func, kernel.name, kernel.param_sizes = "func-handle", "k", []
    mod.name, mod.handle, mod._kernels = "m.cu", "module-handle", {"k": kernel}
    assert kernel.live_func() == "func-handle"
    mod.unload()
    for use in (kernel.live_func, lambda: kernel.prepare(1, 1),
                lambda: module_mod.bare_launches(kernel, 4)):
        with pytest.raises(GraphcertError, match="kernel k belongs to a module that was "
                                                 "unloaded"):
            use()
