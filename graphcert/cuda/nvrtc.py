"""NVRTC build of kernel sources to cubin, with an on-disk cache that is verified, not trusted.

The cache key covers (source digest, included headers, options, arch, NVRTC version). We
compile straight to cubin (SASS) rather than PTX: a newer NVRTC's PTX would not load on an
older driver, while its cubin does under CUDA's minor-version compatibility.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cuda.bindings import nvrtc

from graphcert.cuda.check import check
from graphcert.errors import CompileError, InputError
from graphcert.fileio import atomic_write_bytes
from graphcert.model.jsontext import canonical_json, sha256_text, short_hash
from graphcert.paths import cache_dir, kernels_dir

DEFAULT_OPTIONS: tuple[str, ...] = ("--std=c++17", "-lineinfo")
_MAGIC = b"GRAPHCERT-CUBIN-1\n"
_CACHE_FORMAT = 1


@dataclass(frozen=True)
class Build:
    """A compiled source: its cubin, the cache key, and whether the cache served it."""

    source: Path
    arch: str
    cubin: bytes
    key: str
    cache_hit: bool


def nvrtc_version() -> str:
    major, minor = check(nvrtc.nvrtcVersion(), "nvrtcVersion")
    return f"{major}.{minor}"


def arch_for(compute_capability: str) -> str:
    """'9.0' -> 'sm_90'."""
    major, _, minor = compute_capability.partition(".")
    return f"sm_{int(major)}{int(minor or 0)}"


def resolve_source(name: str | os.PathLike[str]) -> Path:
    """A kernel file by name under kernels/, or a path to a user's .cu file."""
    path = Path(name)
    if not path.is_absolute() and not path.exists():
        path = kernels_dir() / path
    if not path.is_file():
        raise InputError(f"kernel source {name} not found (looked in {kernels_dir()})")
    return path


def _headers(include_dirs: tuple[Path, ...]) -> list[tuple[str, str]]:
    found = []
    for d in include_dirs:
        for h in sorted(d.glob("*.cuh")):
            found.append((h.name, hashlib.sha256(h.read_bytes()).hexdigest()))
    return found


def cache_key(source: Path, arch: str, options: tuple[str, ...],
              include_dirs: tuple[Path, ...]) -> str:
    """sha256 over everything that can change the cubin."""
    parts = {
        "format": _CACHE_FORMAT,
        "source": hashlib.sha256(source.read_bytes()).hexdigest(),
        "headers": _headers(include_dirs),
        "options": list(options),
        "arch": arch,
        "nvrtc": nvrtc_version(),
    }
    return sha256_text(canonical_json(parts))


def _read_cached(path: Path) -> bytes | None:
    """The cubin in a cache entry, or None if absent or damaged (then it is rebuilt)."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    if not blob.startswith(_MAGIC):
        return None
    rest = blob[len(_MAGIC):]
    digest, sep, payload = rest.partition(b"\n")
    if not sep or hashlib.sha256(payload).hexdigest().encode() != digest:
        return None
    if not payload.startswith(b"\x7fELF"):
        return None
    return payload


def _write_cached(path: Path, cubin: bytes) -> None:
    """Atomic write; a cache we cannot write is not an error, only a slower next run."""
    try:
        atomic_write_bytes(path, _MAGIC + hashlib.sha256(cubin).hexdigest().encode() + b"\n"
                           + cubin)
    except OSError:
        pass


def compile_source(source: Path, arch: str, options: tuple[str, ...],
                   include_dirs: tuple[Path, ...]) -> bytes:
    """Run NVRTC; a compile error carries the log (file and line) in CompileError."""
    text = source.read_bytes()
    prog = check(nvrtc.nvrtcCreateProgram(text, source.name.encode(), 0, [], []),
                 "nvrtcCreateProgram")
    try:
        opts = [f"-arch={arch}".encode(), *(o.encode() for o in options),
                *(f"-I{d}".encode() for d in include_dirs)]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if int(err) != 0:
            raise CompileError(str(source.name), _log(prog))
        size = check(nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
        buf = b" " * size
        check(nvrtc.nvrtcGetCUBIN(prog, buf), "nvrtcGetCUBIN")
        return bytes(buf)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _log(prog: object) -> str:
    size = check(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
    buf = b" " * size
    check(nvrtc.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
    return str(buf.rstrip(b"\0 ").decode(errors="replace"))


def build(name: str | os.PathLike[str], arch: str, options: tuple[str, ...] = DEFAULT_OPTIONS,
          *, use_cache: bool = True) -> Build:
    """Compile a kernel source for `arch`, served from the cache when the key matches."""
    source = resolve_source(name)
    include_dirs = tuple(dict.fromkeys((source.parent, kernels_dir())))
    key = cache_key(source, arch, options, include_dirs)
    entry = cache_dir() / "cubin" / f"{source.stem}-{arch}-{short_hash(key, 32)}.cubin"
    if use_cache:
        cached = _read_cached(entry)
        if cached is not None:
            return Build(source, arch, cached, key, cache_hit=True)
    cubin = compile_source(source, arch, options, include_dirs)
    if use_cache:
        _write_cached(entry, cubin)
    return Build(source, arch, cubin, key, cache_hit=False)
