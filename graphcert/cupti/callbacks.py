"""graphcert record's one CUPTI subscriber (CUPTI allows one per process): the resource
callbacks of graph executables and the driver API callbacks of instantiation, update and
stream capture, turned into calls on a `Sink` with plain ints (handles, times, ids). Graph
launches are not heard here: a Python callback on every cuGraphLaunch cost a serving step
8 µs on an H100 (a third of its time); GRAPH_TRACE activity records count and time them.

Nothing here raises into CUPTI: a callback's failure is kept (`Subscriber.errors`) and the
recording goes on. CUDA calls made inside a callback are not traced again (CUPTI does not
invoke callbacks for them), and a guard per thread keeps this code from re-entering anyway.
"""

from __future__ import annotations

import ctypes
import importlib
import threading
import time
from collections.abc import Callable
from types import FrameType, ModuleType, TracebackType
from typing import Any, Protocol

from graphcert.cupti.library import (
    KNOWN,
    CuptiUnavailable,
    libcupti_path,
    load,
    refusal,
    status_name,
)
from graphcert.errors import GraphcertError, NoDriverError

DRIVER_CALLS = (
    "cuGraphInstantiate", "cuGraphInstantiate_v2", "cuGraphInstantiateWithFlags",
    "cuGraphInstantiateWithParams", "cuGraphInstantiateWithParams_ptsz",
    "cuGraphExecUpdate", "cuGraphExecUpdate_v2",
    "cuStreamBeginCapture", "cuStreamBeginCapture_v2", "cuStreamBeginCapture_ptsz",
    "cuStreamBeginCapture_v2_ptsz", "cuStreamBeginCaptureToGraph",
    "cuStreamBeginCaptureToGraph_ptsz", "cuStreamEndCapture", "cuStreamEndCapture_ptsz")
RESOURCES = ("GRAPHEXEC_CREATED", "GRAPHEXEC_DESTROY_STARTING")
MAX_ERRORS = 20  # callback failures kept (the first ones say what went wrong)
SUBSCRIBER_NAME = "graphcert record"
HELD = "ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
_STATE = threading.local()  # per thread: inside one of our callbacks now
_ACTIVE: list[Subscriber] = []  # the subscriber between __enter__ and __exit__ (one at most)


def in_callback(frame: FrameType | None = None) -> bool:
    """True while this thread runs one of graphcert's CUPTI callbacks. An exception raised
    there (a signal handler's KeyboardInterrupt) would be swallowed by cupti-python, so the
    runner's signal handlers defer while this is true (graphcert.run.record).

    With `frame` (the frame a signal interrupted), any frame of this module on its stack
    counts too: a signal that lands on the first lines of a callback, before its busy flag
    is set, would otherwise be raised there and lost."""
    if getattr(_STATE, "busy", False):
        return True
    here = in_callback.__code__.co_filename  # as frames name it (not __file__: a .pyc may differ)
    while frame is not None:
        if frame.f_code.co_filename == here:
            return True
        frame = frame.f_back
    return False


def silence() -> None:
    """Stop every graphcert callback now (from any thread): a signal that keeps landing in a
    callback (every instantiation runs one in the program's thread) then lands in the
    program's own code. Kernel activity records still flow; later graph events are not
    heard (the recording is ending)."""
    for sub in list(_ACTIVE):
        sub.silence()


def subscribe(cupti: ModuleType, callback: Callable[..., None]) -> int:
    """CUPTI's one subscriber for `callback`, or CuptiUnavailable saying why not.

    cuptiSubscribe (v1) first: on the H100 (driver 580) subscribe_v2 with cupti-python's
    SubscriberParams answered ERROR_INVALID_PARAMETER under `graphcert record` while plain
    subscribe had worked in a probe. subscribe_v2 is tried only when v1 failed: it may still
    work, and after ERROR_MULTIPLE_SUBSCRIBERS it names the other subscriber (only that
    status writes the name)."""
    try:
        return int(cupti.subscribe(callback, None))
    except Exception as exc:  # noqa: BLE001 (cuptiError and the loader's errors)
        first: BaseException = exc
    if not hasattr(cupti, "subscribe_v2") or isinstance(_refused(first), NoDriverError):
        raise _refused(first) from None
    params: Any = None
    try:
        params = cupti.SubscriberParams()
        params.struct_size = cupti.SUBSCRIBER_PARAMS_SIZE
        params.subscriber_name = SUBSCRIBER_NAME
        return int(cupti.subscribe_v2(callback, None, params.ptr))
    except Exception as exc:  # noqa: BLE001
        second = status_name(exc)
    if HELD not in (status_name(first), second):
        err = _refused(first)
        also = f"; subscribe_v2 gave {second}" if second != status_name(first) else ""
        raise type(err)(err.message + also, hint=err.hint) from None
    holder = holder_name(params) if second == HELD else ""
    raise CuptiUnavailable(
        f"CUPTI is held by another profiler{f' ({holder})' if holder else ''}: subscribing "
        f"failed with {HELD}",
        hint="run graphcert record outside Nsight Systems / Nsight Compute, without "
             "torch.profiler or another CUPTI client in the program") from None


class SubscribeParams(Protocol):
    """What cuptiSubscribe_v2 fills in when it refuses: the current subscriber's name."""

    old_subscriber_name: str | None


def holder_name(params: SubscribeParams) -> str:
    """The other subscriber's name CUPTI wrote into `params`, or "" when it wrote none that
    reads as text (the buffer is uninitialised memory until CUPTI writes it)."""
    try:
        text = str(params.old_subscriber_name or "").strip()
    except (UnicodeDecodeError, ValueError, AttributeError):
        return ""
    return text[:80] if text.isprintable() and len(text) >= 3 else ""


def _refused(exc: BaseException) -> GraphcertError:
    """A failed cuptiSubscribe as one line: held, denied, refused or the status as it is.
    A status that names no cause also names the libcupti that answered (which copy is
    loaded decides what CUPTI accepts)."""
    err = refusal("subscribing to callbacks (cuptiSubscribe)", exc, tool="graphcert record")
    name, lib = status_name(exc), libcupti_path()
    if lib and name.startswith("ERROR_") and name not in KNOWN:
        return CuptiUnavailable(f"{err.message} (libcupti: {lib})", hint=err.hint)
    return err


class Sink(Protocol):
    """What the subscriber reports; times are time.perf_counter_ns() values."""

    def instantiated(self, graph: int, graph_exec: int, start_ns: int, end_ns: int) -> None:
        ...

    def captured(self, graph: int, start_ns: int, end_ns: int) -> None: ...

    def updated(self, graph_exec: int, ok: bool, result: str, at_ns: int) -> None: ...

    def destroyed(self, graph_exec: int, at_ns: int) -> None: ...


def params_class_name(call: str) -> str:
    """cupti's params class of a driver call: cuGraphLaunch_ptsz -> CuGraphLaunchPtszParams."""
    return "".join(p[:1].upper() + p[1:] for p in call.split("_")) + "Params"


def _word(address: int) -> int:
    """The 64-bit value at `address` (an out-parameter the driver has written)."""
    return int(ctypes.c_uint64.from_address(address).value) if address else 0


def _result(data: Any) -> int:
    """The CUresult a driver call returned (at its API exit)."""
    address = int(data.function_return_value or 0)
    return int(ctypes.c_int.from_address(address).value) if address else 0


class Subscriber:
    """Subscribes on entry (CuptiUnavailable when CUPTI refuses: held by another client, or
    any other CUPTI status, named as it is) and unsubscribes on exit; between the two, `sink`
    hears of every graph executable."""

    def __init__(self, sink: Sink, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self._sink = sink
        self._clock = clock
        self._cupti: ModuleType | None = None
        self._params: Any = None
        self._handle: int | None = None
        self._names: dict[int, str] = {}
        self._local = threading.local()
        self._captures: dict[int, int] = {}  # stream -> capture begin
        self._silent = False
        self.errors: list[str] = []

    def __enter__(self) -> Subscriber:
        cupti = self._cupti = load()
        try:  # the typed parameters of driver calls (cupti-python 13.4 has them)
            self._params = importlib.import_module("cupti.cuda_driver_api_params")
        except ImportError:
            raise CuptiUnavailable("this cupti-python has no cuda_driver_api_params module",
                                   hint="pip install 'cupti-python>=13.4,<14'") from None
        self._handle = subscribe(cupti, self._dispatch)
        try:
            for name in RESOURCES:
                cupti.enable_callback(1, self._handle, cupti.CallbackDomain.RESOURCE,
                                      getattr(cupti.CallbackIdResource, name))
            for name in DRIVER_CALLS:
                cbid = getattr(cupti.DriverApiTraceCbid, name, None)
                if cbid is not None:
                    self._names[int(cbid)] = name
                    cupti.enable_callback(1, self._handle, cupti.CallbackDomain.DRIVER_API,
                                          cbid)
        except Exception as exc:
            self._unsubscribe()
            raise CuptiUnavailable(f"CUPTI refused a callback: {status_name(exc)}",
                                   hint="check the driver with nvidia-smi") from None
        _ACTIVE.append(self)
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        self._unsubscribe()

    def silence(self) -> None:
        """Each callback that still comes returns at once. Only a flag: silence() runs on a
        timer thread, and a CUPTI call from there (enable_domain) could wait on a lock the
        program's thread holds inside a callback."""
        self._silent = True

    def _unsubscribe(self) -> None:
        if self._cupti is not None and self._handle is not None:
            try:
                self._cupti.unsubscribe(self._handle)
            except Exception:  # noqa: BLE001 (best effort on the way out)
                pass
            self._handle = None

    # ------------------------------------------------------------------ in CUPTI's thread

    def _dispatch(self, _userdata: object, domain: int, cbid: int, data: Any) -> None:
        if self._silent or getattr(_STATE, "busy", False):
            return
        _STATE.busy = True
        try:
            cupti = self._cupti
            assert cupti is not None
            if domain == cupti.CallbackDomain.RESOURCE:
                self._resource(cupti, cbid, data)
            elif domain == cupti.CallbackDomain.DRIVER_API:
                self._driver(cupti, self._names.get(int(cbid), ""), data)
        except Exception as exc:  # noqa: BLE001 (never raise into the driver)
            if len(self.errors) < MAX_ERRORS:
                self.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            _STATE.busy = False

    def _resource(self, cupti: ModuleType, cbid: int, data: Any) -> None:
        gd = cupti.GraphData.from_ptr(data.resource_descriptor)
        if cbid == cupti.CallbackIdResource.GRAPHEXEC_CREATED:
            pending = getattr(self._local, "pending", None)
            if pending is None:
                pending = self._local.pending = []
            pending.append((int(gd.graph), int(gd.graph_exec)))
        elif cbid == cupti.CallbackIdResource.GRAPHEXEC_DESTROY_STARTING:
            self._sink.destroyed(int(gd.graph_exec), self._clock())

    def _driver(self, cupti: ModuleType, name: str, data: Any) -> None:
        enter = data.callback_site == cupti.ApiCallbackSite.API_ENTER
        params = getattr(self._params, params_class_name(name)).from_ptr(data.function_params)
        now = self._clock()
        if name.startswith("cuGraphInstantiate"):
            if enter:
                self._local.pending = []
                self._local.started = now
            elif _result(data) == 0:  # a failed instantiation made no executable
                self._instantiated(params, now)
            else:
                self._local.pending = []
        elif name.startswith("cuGraphExecUpdate"):
            if not enter:
                code = _result(data)
                self._sink.updated(int(params.h_graph_exec), code == 0,
                                   "CUDA_SUCCESS" if code == 0 else f"CUresult {code}", now)
        elif name.startswith("cuStreamBeginCapture"):
            if enter:
                self._captures[int(params.h_stream)] = now
        elif name.startswith("cuStreamEndCapture") and not enter:
            began = self._captures.pop(int(params.h_stream), None)
            graph = _word(int(params.ph_graph))
            if graph and began is not None:
                self._sink.captured(graph, began, now)

    def _instantiated(self, params: Any, now: int) -> None:
        started = getattr(self._local, "started", now)
        made = getattr(self._local, "pending", None) or []
        self._local.pending = []
        if not made:  # no resource callback came: the out-parameter names the executable
            exe = _word(int(params.ph_graph_exec))
            made = [(int(params.h_graph), exe)] if exe else []
        for graph, exe in made:
            self._sink.instantiated(graph, exe, started, now)


__all__ = ["DRIVER_CALLS", "RESOURCES", "Sink", "Subscriber", "holder_name", "in_callback",
           "silence",
           "params_class_name", "subscribe"]
