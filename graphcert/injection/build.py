"""Build the injection collector and the exit hook with the system C compiler, once per
source, CUPTI and compiler: cached in `<cache>/collector/<hash>/` (graphcert.paths).

The collector compiles against the CUPTI headers of the installed nvidia-cuda-cupti wheel and
the CUDA toolkit's cuda.h, and links that wheel's libcupti.so.13 by rpath; it does not link
libcuda (it finds the driver's functions through cuGetProcAddress at run time). Found
without importing cupti or cuda.bindings. A build goes into a temporary folder that is then
renamed into place, so a process never sees half a library.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import metadata, util
from pathlib import Path

from graphcert.errors import ExitStatus, GraphcertError
from graphcert.paths import cache_dir

SOURCE_DIR = Path(__file__).resolve().parent
COLLECTOR_SOURCES = ("collector.c", "activity.c", "devices.c", "graphread.c", "kernread.c",
                     "drv.c", "jsonout.c", "procinfo.c")
HOOK_SOURCE = "exit_hook.c"
COLLECTOR_NAME = "libgraphcert_collector.so"
HOOK_NAME = "libgraphcert_exit_hook.so"
LIBCUPTI = "libcupti.so.13"
CUPTI_DISTRIBUTIONS = ("nvidia-cuda-cupti", "nvidia-cuda-cupti-cu13")
# Where cuda.h is looked for after $CUDA_HOME and the nvcc on PATH.
DEFAULT_CUDA_INCLUDES = (Path("/usr/local/cuda/include"),)
COMPILERS = ("cc", "gcc", "clang")
FLAGS = ("-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", "-pthread",
         "-fvisibility=hidden")
_TIMEOUT_S = 300


class CollectorUnavailable(GraphcertError):
    """The collector cannot be built here; the message names the fix."""

    exit_code = ExitStatus.UNUSABLE


@dataclass(frozen=True)
class Built:
    """The built libraries and what they were built against."""

    collector: Path  # CUDA_INJECTION64_PATH
    exit_hook: Path  # LD_PRELOAD
    libcupti: Path  # the wheel's libcupti.so.13 (also NVTX_INJECTION64_PATH)
    cupti_include: Path


@dataclass(frozen=True)
class _Cupti:
    include: Path
    lib: Path
    version: str


def build() -> Built:
    """The collector and the exit hook, compiled on first use; CollectorUnavailable (exit 2)
    naming the fix when there is no C compiler, no cuda.h, no CUPTI wheel or the compile
    fails."""
    cupti = find_cupti()
    cuda_include = find_cuda_include()
    compiler = find_compiler()
    identity = compiler_identity(compiler)
    sources = source_hash()
    # cuda.h's version too: the driver functions are asked for at its CUDA_VERSION
    key = hashlib.sha256(f"{sources}\n{cupti.version}\n{identity}\n{_cuda_version(cuda_include)}"
                         f"\n{' '.join(FLAGS)}".encode()).hexdigest()[:24]
    root = cache_dir() / "collector"
    target = root / key
    built = Built(target / COLLECTOR_NAME, target / HOOK_NAME, cupti.lib / LIBCUPTI,
                  cupti.include)
    if built.collector.is_file() and built.exit_hook.is_file():
        return built
    try:
        root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
    except OSError as exc:
        raise CollectorUnavailable(f"cannot write the collector's cache in {root}: "
                                   f"{exc.strerror or exc}",
                                   hint="set GRAPHCERT_CACHE to a writable folder") from None
    try:
        _compile(compiler, cupti, cuda_include, sources, work, root / f"{key}.log")
        work.chmod(0o755)  # mkdtemp's 0700 would hide the libraries from other users
        try:
            os.rename(work, target)  # atomic: the folder appears whole or not at all
        except OSError:
            if not (built.collector.is_file() and built.exit_hook.is_file()):
                # not another process's finished build: a folder missing a library (removed
                # by hand, say) is replaced once
                shutil.rmtree(target, ignore_errors=True)
                os.rename(work, target)
    except OSError as exc:
        raise CollectorUnavailable(f"cannot write the collector's cache in {root}: "
                                   f"{exc.strerror or exc}",
                                   hint="set GRAPHCERT_CACHE to a writable folder") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)  # gone already when the rename won
    return built


def _compile(compiler: list[str], cupti: _Cupti, cuda_include: Path, sources: str,
             work: Path, log: Path) -> None:
    includes = [f"-I{SOURCE_DIR}", f"-I{cupti.include}", f"-I{cuda_include}"]
    collector = [*compiler, *FLAGS, *includes, f'-DGRAPHCERT_SOURCE_HASH="{sources}"',
                 *(str(SOURCE_DIR / name) for name in COLLECTOR_SOURCES),
                 "-o", str(work / COLLECTOR_NAME),
                 # the file itself, not -l:NAME: its soname is recorded, with any linker
                 str(cupti.lib / LIBCUPTI), f"-Wl,-rpath,{cupti.lib}", "-ldl"]
    hook = [*compiler, *FLAGS, str(SOURCE_DIR / HOOK_SOURCE), "-o", str(work / HOOK_NAME),
            "-ldl"]
    for command in (collector, hook):
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_S,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CollectorUnavailable(f"the C compiler {compiler[0]} could not run: {exc}",
                                       hint="install gcc or set CC") from None
        if done.returncode != 0:
            text = f"$ {shlex.join(command)}\n{done.stdout}{done.stderr}"
            log.write_text(text, encoding="utf-8")
            raise CollectorUnavailable(
                f"compiling the collector failed: {_first_error(done.stderr)}",
                hint=f"the compiler's output is in {log}")


def _first_error(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for line in lines:
        if "error:" in line:  # gcc's and clang's "FILE:LINE:COL: error: ..."
            return line
    return lines[0] if lines else "no output"


def source_hash() -> str:
    """sha256 over the collector's and the hook's sources (names and bytes)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in SOURCE_DIR.iterdir() if p.suffix in (".c", ".h")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def find_compiler() -> list[str]:
    """The C compiler command: $CC (may carry flags), else cc, gcc or clang on PATH."""
    chosen = os.environ.get("CC", "").strip()
    if chosen:
        try:
            words = shlex.split(chosen)
        except ValueError as exc:  # an unbalanced quote
            raise CollectorUnavailable(f"CC={chosen} cannot be read as a command ({exc})",
                                       hint="balance its quotes, or set CC to the compiler "
                                            "alone") from None
        if words and shutil.which(words[0]):
            return words
        raise CollectorUnavailable(f"CC={chosen} is not a C compiler on this machine",
                                   hint="install gcc or set CC")
    for name in COMPILERS:
        found = shutil.which(name)
        if found:
            return [found]
    raise CollectorUnavailable("no C compiler (cc, gcc or clang) on PATH",
                               hint="install gcc or set CC")


def compiler_identity(compiler: list[str]) -> str:
    """The first line of `cc --version`: part of the cache key."""
    try:
        done = subprocess.run([*compiler, "--version"], capture_output=True, text=True,
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CollectorUnavailable(f"the C compiler {compiler[0]} could not run: {exc}",
                                   hint="install gcc or set CC") from None
    lines = (done.stdout or done.stderr).splitlines()
    return lines[0].strip() if lines else compiler[0]


def find_cuda_include() -> Path:
    """The folder holding cuda.h: $CUDA_HOME/include, the nvcc on PATH's ../include, or
    /usr/local/cuda/include."""
    candidates: list[Path] = []
    home = os.environ.get("CUDA_HOME")
    if home:
        candidates.append(Path(home) / "include")
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(Path(nvcc).resolve().parent.parent / "include")
    candidates += DEFAULT_CUDA_INCLUDES
    for folder in candidates:
        if (folder / "cuda.h").is_file():
            return folder
    looked = ", ".join(str(c) for c in candidates)
    raise CollectorUnavailable(f"no cuda.h for the collector (looked in {looked})",
                               hint="install the CUDA toolkit headers or set CUDA_HOME")


def find_cupti() -> _Cupti:
    """The nvidia-cuda-cupti wheel's include and lib folders (nvidia/cu13/...) and its
    version, found through importlib without importing cupti."""
    for root in nvidia_roots():
        base = Path(root) / "cu13"
        include, lib = base / "include", base / "lib"
        if (include / "cupti_activity.h").is_file() and (lib / LIBCUPTI).is_file():
            return _Cupti(include, lib, _cupti_version(include))
    raise CollectorUnavailable(f"no CUPTI wheel ({LIBCUPTI} and its headers under "
                               "nvidia/cu13/) in this Python",
                               hint="pip install 'cupti-python>=13,<14' (it brings "
                                    "nvidia-cuda-cupti)")


def _cuda_version(include: Path) -> str:
    try:
        text = (include / "cuda.h").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "unknown"
    found = re.search(r"#define\s+CUDA_VERSION\s+(\d+)", text)
    return found.group(1) if found else "unknown"


def nvidia_roots() -> list[str]:
    """The folders of the `nvidia` namespace package (where NVIDIA's wheels put their files),
    found without importing anything."""
    try:
        spec = util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec is not None else []


def _cupti_version(include: Path) -> str:
    for name in CUPTI_DISTRIBUTIONS:
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    try:
        text = (include / "cupti_version.h").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "unknown"
    found = re.search(r"#define\s+CUPTI_API_VERSION\s+(\d+)", text)
    return f"CUPTI_API_VERSION {found.group(1)}" if found else "unknown"


__all__ = ["Built", "CollectorUnavailable", "build"]
