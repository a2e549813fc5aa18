"""One check for every driver and NVRTC result: errors name the call, the CUDA name, the fix."""

from __future__ import annotations

from typing import Any, cast

from cuda.bindings import driver, nvrtc

from graphcert.cuda.types import DriverEnum
from graphcert.errors import WHAT_NEEDS_A_GPU, CudaError, NoDriverError

NO_DRIVER_MESSAGE = f"no NVIDIA driver found: {WHAT_NEEDS_A_GPU}"

# CUresult names that mean "there is no usable driver or device here".
_NO_DEVICE = {
    "CUDA_ERROR_NO_DEVICE",
    "CUDA_ERROR_STUB_LIBRARY",
    "CUDA_ERROR_INSUFFICIENT_DRIVER",
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
}

# What to do about an error, where we know.
HINTS: dict[str, str] = {
    "CUDA_ERROR_OUT_OF_MEMORY": "use a smaller --size or --classes range, or free the GPU",
    "CUDA_ERROR_INVALID_DEVICE": "pick a device index listed by `graphcert env`",
    "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED": (
        "the recording made a call that cannot be captured (an allocation, a synchronise, "
        "a blocking copy): allocate in setup() or capture with --mode relaxed"
    ),
    "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED": (
        "an earlier call in the recording broke the capture; look for an uncapturable call"
    ),
    "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT": (
        "the recording used the legacy default stream; enqueue only on the stream given"
    ),
    "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD": (
        "capture ended on another thread; use --mode thread-local or relaxed"
    ),
    "CUDA_ERROR_STREAM_CAPTURE_UNJOINED": "join every forked stream back before the capture ends",
    "CUDA_ERROR_STREAM_CAPTURE_ISOLATION": "a captured stream depended on an uncaptured one",
    "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE": (
        "the new graph's topology differs: re-instantiate instead of updating"
    ),
    "CUDA_ERROR_ILLEGAL_ADDRESS": (
        "a kernel touched memory out of bounds; the context is lost: restart and run "
        "compute-sanitizer on the workload"
    ),
    "CUDA_ERROR_LAUNCH_FAILED": "a kernel faulted; the context is lost: restart the process",
    "CUDA_ERROR_NO_BINARY_FOR_GPU": "clear the kernel cache (GRAPHCERT_CACHE) and rebuild",
    "CUDA_ERROR_INVALID_IMAGE": "clear the kernel cache (GRAPHCERT_CACHE) and rebuild",
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION": (
        "the driver is older than the compiler: upgrade the driver or install an NVRTC "
        "wheel that matches it"
    ),
    "CUDA_ERROR_NOT_SUPPORTED": "this driver or GPU lacks the feature; upgrade the driver",
    "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES": "lower the block size or shared memory of the launch",
    "CUDA_ERROR_INVALID_VALUE": "an argument is out of range; check sizes and launch shape",
}

_driver_loaded = False  # the library is there, so cuGetErrorString works
_initialized = False


def _error_text(err: Any) -> str:
    if _driver_loaded and isinstance(err, driver.CUresult):
        try:
            res, text = driver.cuGetErrorString(err)
            if int(res) == 0 and text:
                return text.decode() if isinstance(text, bytes) else str(text)
        except Exception:  # the text is a courtesy; the name below is the fact
            pass
    if isinstance(err, nvrtc.nvrtcResult):
        res, text = nvrtc.nvrtcGetErrorString(err)
        if int(res) == 0 and text.decode() != err.name:
            return str(text.decode())
    # NVRTC's "string" is its enum name, and with no driver there is no text: spell it out.
    name = str(err.name)
    return name.replace("CUDA_ERROR_", "").replace("NVRTC_ERROR_", "").replace("_", " ").lower()


def error_for(err: DriverEnum, call: str, hint: str | None = None) -> CudaError:
    """The GraphcertError for a failed result (used by check and by capture's unwinding)."""
    name = getattr(err, "name", str(err))
    text = _error_text(err)
    if name in _NO_DEVICE:
        raise NoDriverError(f"{call}: {name}: {NO_DRIVER_MESSAGE}")
    return CudaError(call, int(err), name, text, hint or HINTS.get(name))


def check(result: DriverEnum | tuple[object, ...], call: str,
          hint: str | None = None) -> Any:
    """Unwrap a cuda-bindings result tuple; raise CudaError naming `call` on failure.

    Returns None for a bare status, the value for one output, a tuple for several. The
    outputs stay Any: cuda.bindings ships no stubs, so only the caller, which knows the
    call, can name what came back (a CUgraph, a count, ...).
    """
    if isinstance(result, tuple):
        err, values = cast(DriverEnum, result[0]), result[1:]
    else:
        err, values = result, ()
    if int(err) != 0:
        raise error_for(err, call, hint)
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def load_driver() -> None:
    """cuInit once; no driver library or no device becomes NoDriverError."""
    global _driver_loaded, _initialized
    if _initialized:
        return
    try:
        err = driver.cuInit(0)[0]
    except Exception as exc:  # cuda.pathfinder: the driver library is not on this machine
        if type(exc).__name__ in ("DynamicLibNotFoundError", "RuntimeError", "OSError"):
            raise NoDriverError(NO_DRIVER_MESSAGE) from exc
        raise
    _driver_loaded = True
    check(err, "cuInit")
    _initialized = True
