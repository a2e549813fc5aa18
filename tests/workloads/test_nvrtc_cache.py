"""NVRTC build (no GPU needed) and the on-disk cubin cache."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from graphcert.cuda import nvrtc
from graphcert.errors import CompileError
from graphcert.paths import kernels_dir

KERNELS = sorted(p.name for p in kernels_dir().glob("*.cu"))


@pytest.mark.parametrize("name", KERNELS)
def test_every_kernel_compiles_for_hopper(name: str) -> None:
    build = nvrtc.build(name, "sm_90", use_cache=False)
    assert build.cubin.startswith(b"\x7fELF")


def test_kernels_found() -> None:
    assert "graphcert_runtime.cu" in KERNELS


def _copy(tmp_path: Path, name: str = "graphcert_runtime.cu") -> Path:
    dst = tmp_path / "src" / name
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(kernels_dir() / name, dst)
    shutil.copy(kernels_dir() / "graphcert_device.cuh", dst.parent)
    return dst


def test_cache_miss_then_hit(tmp_path: Path, isolated_cache: Path) -> None:
    src = _copy(tmp_path)
    first = nvrtc.build(src, "sm_90")
    second = nvrtc.build(src, "sm_90")
    assert not first.cache_hit and second.cache_hit
    assert first.cubin == second.cubin
    assert len(list((isolated_cache / "cubin").glob("*.cubin"))) == 1


def test_key_covers_arch_and_options(tmp_path: Path, isolated_cache: Path) -> None:
    src = _copy(tmp_path)
    nvrtc.build(src, "sm_90")
    assert not nvrtc.build(src, "sm_80").cache_hit
    assert not nvrtc.build(src, "sm_90", options=("--std=c++17",)).cache_hit


def test_source_change_invalidates(tmp_path: Path, isolated_cache: Path) -> None:
    src = _copy(tmp_path)
    before = nvrtc.build(src, "sm_90")
    src.write_text(src.read_text() + "\nextern \"C\" __global__ void added_later() {}\n")
    after = nvrtc.build(src, "sm_90")
    assert not after.cache_hit and after.key != before.key


def test_header_change_invalidates(tmp_path: Path, isolated_cache: Path) -> None:
    src = _copy(tmp_path)
    nvrtc.build(src, "sm_90")
    header = src.parent / "graphcert_device.cuh"
    header.write_text(header.read_text() + "\n// changed\n")
    assert not nvrtc.build(src, "sm_90").cache_hit


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_corrupt_entry_is_rebuilt(tmp_path: Path, isolated_cache: Path, damage: str) -> None:
    src = _copy(tmp_path)
    good = nvrtc.build(src, "sm_90")
    (entry,) = (isolated_cache / "cubin").glob("*.cubin")
    blob = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(blob[: len(blob) // 2])
    elif damage == "flip":
        entry.write_bytes(blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:])
    else:
        entry.write_bytes(b"not a cubin at all")
    rebuilt = nvrtc.build(src, "sm_90")
    assert not rebuilt.cache_hit
    assert rebuilt.cubin == good.cubin
    assert nvrtc.build(src, "sm_90").cache_hit  # the rewritten entry is good again


def test_compile_error_shows_file_and_line(tmp_path: Path, isolated_cache: Path) -> None:
    bad = tmp_path / "broken.cu"
    bad.write_text('extern "C" __global__ void k(int* p) {\n  p[0] = undefined_name;\n}\n')
    with pytest.raises(CompileError) as info:
        nvrtc.build(bad, "sm_90")
    assert "broken.cu(2)" in info.value.log
    assert "undefined_name" in info.value.one_line()
    assert not list((isolated_cache / "cubin").glob("*.cubin"))


def test_unwritable_cache_still_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("GRAPHCERT_CACHE", str(blocker / "cache"))  # parent is a file
    assert not nvrtc.build(_copy(tmp_path), "sm_90").cache_hit


def test_arch_for() -> None:
    assert nvrtc.arch_for("9.0") == "sm_90"
    assert nvrtc.arch_for("10.0") == "sm_100"
