"""Loading CUPTI (`cupti-python`'s `cupti.cupti` module) and turning its failures into one
line each: not installed, libcupti missing, refused by the driver, held by another profiler,
not permitted. Every failure is a `CuptiUnavailable` (exit 2, nothing partial)."""

from __future__ import annotations

import importlib
from importlib import metadata
from types import ModuleType

from graphcert.errors import ExitStatus, GraphcertError, NoDriverError

PACKAGE = "cupti-python"
INSTALL = "pip install 'cupti-python>=13,<14' (it brings nvidia-cuda-cupti and pyelftools)"

# cupti.Result names, grouped by what the user must do about them.
HELD = frozenset({"ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED", "ERROR_OLD_PROFILER_API_INITIALIZED",
                  "ERROR_HARDWARE_BUSY"})
REFUSED = frozenset({"ERROR_NOT_COMPATIBLE", "ERROR_CUDA_COMPILER_NOT_COMPATIBLE",
                     "ERROR_NOT_SUPPORTED", "ERROR_API_NOT_IMPLEMENTED",
                     "ERROR_LEGACY_PROFILER_NOT_SUPPORTED", "ERROR_NOT_INITIALIZED",
                     "ERROR_CMP_DEVICE_NOT_SUPPORTED", "ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED",
                     "ERROR_WSL_DEVICE_NOT_SUPPORTED", "ERROR_MIG_DEVICE_NOT_SUPPORTED",
                     "ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED"})
DENIED = frozenset({"ERROR_INSUFFICIENT_PRIVILEGES",
                    "ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES"})
KNOWN = HELD | REFUSED | DENIED  # statuses whose cause the message names


class CuptiUnavailable(GraphcertError):
    """CUPTI cannot trace here; the message names why and the hint how to fix it."""

    exit_code = ExitStatus.UNUSABLE


def load() -> ModuleType:
    """The `cupti.cupti` module, or CuptiUnavailable saying why it cannot be loaded."""
    try:
        return importlib.import_module("cupti.cupti")
    except ModuleNotFoundError as exc:
        if exc.name in ("cupti", "cupti.cupti"):
            raise CuptiUnavailable("CUPTI is not installed: no module named 'cupti'",
                                   hint=INSTALL) from None
        raise _no_library(exc) from None
    except (ImportError, OSError, RuntimeError) as exc:
        raise _no_library(exc) from None


def _no_library(exc: BaseException) -> CuptiUnavailable:
    text = " ".join(str(exc).split())[:160]
    return CuptiUnavailable(f"CUPTI could not be loaded ({type(exc).__name__}: {text})",
                            hint="pip install nvidia-cuda-cupti of the cupti-python's CUDA "
                                 "major (libcupti.so), or put its lib folder on LD_LIBRARY_PATH")


def version() -> int:
    """The installed cupti-python's version as CUDA writes versions (13.4 -> 13040), or 0 when
    it cannot be read. cupti-python 13.4 exposes no cuptiGetVersion, so the package says it."""
    try:
        parts = metadata.version(PACKAGE).split(".")
        return int(parts[0]) * 1000 + int(parts[1]) * 10
    except (metadata.PackageNotFoundError, ValueError, IndexError):
        return 0


def status_name(exc: BaseException) -> str:
    """The cupti.Result name of a cuptiError ("ERROR_..."), or the exception's type name."""
    text = str(exc).split()
    if text and text[0].startswith("ERROR_"):
        return text[0]
    return type(exc).__name__


def refusal(what: str, exc: BaseException, tool: str = "graphcert profile") -> GraphcertError:
    """The one-line error for a CUPTI call `what` that failed with `exc` (a cuptiError);
    `tool` is the command the hint tells the user to run differently."""
    name = status_name(exc)
    if "libcuda" in str(exc) or "driver is not found" in str(exc):
        return NoDriverError(f"no NVIDIA driver: CUPTI cannot trace ({what} failed)",
                             hint="run on a machine with an NVIDIA GPU and its driver")
    if name in HELD:
        return CuptiUnavailable(
            f"CUPTI is held by another profiler: {what} failed with {name}",
            hint=f"run {tool} outside Nsight Systems / Nsight Compute and with "
                 "torch.profiler (or any other CUPTI client) stopped")
    if name in DENIED:
        return CuptiUnavailable(
            f"CUPTI may not profile this GPU: {what} failed with {name}",
            hint="allow profiling for non-admin users (NVreg_RestrictProfilingToAdminUsers=0) "
                 "or run as root")
    if name in REFUSED:
        return CuptiUnavailable(
            f"the driver refuses this CUPTI ({PACKAGE} {_dotted(version())}): {what} failed "
            f"with {name}",
            hint="install the cupti-python and nvidia-cuda-cupti of the driver's CUDA major "
                 "(13.x needs driver R580 or newer; see nvidia-smi)")
    return CuptiUnavailable(f"CUPTI failed: {what} gave {name} ({' '.join(str(exc).split())})",
                            hint="check the driver with nvidia-smi; stop any other profiler")


def libcupti_path() -> str | None:
    """The libcupti this process has loaded (from /proc/self/maps), or None (not loaded, or
    no /proc). Another copy may be loaded first by another library (PyTorch loads its own
    at import), and which copy answers decides what CUPTI accepts."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                if "libcupti.so" in line:
                    return line.split(None, 5)[-1].strip()
    except OSError:
        return None
    return None


def _dotted(v: int) -> str:
    return f"{v // 1000}.{v % 1000 // 10}" if v else "of unknown version"
