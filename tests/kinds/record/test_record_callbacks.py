"""graphcert record's CUPTI callback plumbing without a GPU (issue 32): a fake `cupti` module
drives Subscriber._dispatch the way CUPTI calls it (domains, callback ids, API enter/exit,
typed params read from addresses), and the Sink hears instantiations, captures, launches,
updates and destructions with plain ints. The handles and ids are SYNTHETIC."""

from __future__ import annotations

import ctypes
import enum
from types import SimpleNamespace
from typing import Any

from graphcert.cupti.callbacks import DRIVER_CALLS, Subscriber, params_class_name


class Domain(enum.IntEnum):
    DRIVER_API = 1
    RESOURCE = 2


class Site(enum.IntEnum):
    API_ENTER = 0
    API_EXIT = 1


class Resource(enum.IntEnum):
    GRAPHEXEC_CREATED = 20
    GRAPHEXEC_DESTROY_STARTING = 21


GRAPH_DATA: dict[int, Any] = {}  # resource_descriptor -> GraphData-like
PARAMS: dict[int, Any] = {}  # function_params -> params-like


class _FromPtr:
    @staticmethod
    def from_ptr(ptr: int) -> Any:
        return PARAMS[ptr]


FAKE_CUPTI = SimpleNamespace(
    CallbackDomain=Domain, ApiCallbackSite=Site, CallbackIdResource=Resource,
    GraphData=SimpleNamespace(from_ptr=lambda ptr: GRAPH_DATA[ptr]))
FAKE_PARAMS = SimpleNamespace(**{params_class_name(n): _FromPtr for n in DRIVER_CALLS})
CBID = {name: 100 + i for i, name in enumerate(DRIVER_CALLS)}


class Heard:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def instantiated(self, graph: int, graph_exec: int, start_ns: int, end_ns: int) -> None:
        self.calls.append(("instantiated", graph, graph_exec, end_ns - start_ns))

    def captured(self, graph: int, start_ns: int, end_ns: int) -> None:
        self.calls.append(("captured", graph, end_ns - start_ns))

    def updated(self, graph_exec: int, ok: bool, result: str, at_ns: int) -> None:
        self.calls.append(("updated", graph_exec, ok, result))

    def destroyed(self, graph_exec: int, at_ns: int) -> None:
        self.calls.append(("destroyed", graph_exec))


def _subscriber() -> tuple[Subscriber, Heard]:
    heard = Heard()
    ticks = iter(range(0, 10_000, 10))
    sub = Subscriber(heard, clock=lambda: next(ticks))
    sub._cupti = FAKE_CUPTI  # type: ignore[assignment]
    sub._params = FAKE_PARAMS
    sub._names = {cbid: name for name, cbid in CBID.items()}
    return sub, heard


_KEEP: list[Any] = []  # ctypes cells whose addresses the fake data hands out


def _cell(value: int, kind: Any = ctypes.c_uint64) -> int:
    cell = kind(value)
    _KEEP.append(cell)
    return ctypes.addressof(cell)


def _api(sub: Subscriber, name: str, site: Site, params: dict[str, Any], *, code: int = 0,
         correlation: int = 0) -> None:
    key = len(PARAMS) + 1
    PARAMS[key] = SimpleNamespace(**params)
    data = SimpleNamespace(callback_site=site, function_params=key, correlation_id=correlation,
                           function_return_value=_cell(code, ctypes.c_int))
    sub._dispatch(None, Domain.DRIVER_API, CBID[name], data)


def _resource(sub: Subscriber, cbid: Resource, graph: int, graph_exec: int) -> None:
    key = len(GRAPH_DATA) + 1
    GRAPH_DATA[key] = SimpleNamespace(graph=graph, graph_exec=graph_exec)
    sub._dispatch(None, Domain.RESOURCE, cbid, SimpleNamespace(resource_descriptor=key))


def test_a_capture_instantiate_launch_update_destroy_sequence_reaches_the_sink() -> None:
    sub, heard = _subscriber()
    _api(sub, "cuStreamBeginCapture_v2", Site.API_ENTER, {"h_stream": 7})
    _api(sub, "cuStreamEndCapture", Site.API_EXIT, {"h_stream": 7, "ph_graph": _cell(0xA)})
    _api(sub, "cuGraphInstantiateWithFlags", Site.API_ENTER, {"h_graph": 0xA,
                                                              "ph_graph_exec": 0})
    _resource(sub, Resource.GRAPHEXEC_CREATED, 0xA, 0xE)
    _api(sub, "cuGraphInstantiateWithFlags", Site.API_EXIT, {"h_graph": 0xA,
                                                             "ph_graph_exec": _cell(0xE)})
    _api(sub, "cuGraphExecUpdate_v2", Site.API_EXIT, {"h_graph_exec": 0xE, "h_graph": 0xB,
                                                      "result_info": 0}, code=910)
    _resource(sub, Resource.GRAPHEXEC_DESTROY_STARTING, 0xA, 0xE)
    assert sub.errors == []
    assert heard.calls == [("captured", 0xA, 10), ("instantiated", 0xA, 0xE, 10),
                           ("updated", 0xE, False, "CUresult 910"), ("destroyed", 0xE)]
    # launches are not subscribed to (GRAPH_TRACE records count them)
    assert not any(name.startswith("cuGraphLaunch") for name in DRIVER_CALLS)


def test_without_a_resource_callback_the_out_parameter_names_the_executable() -> None:
    sub, heard = _subscriber()
    _api(sub, "cuGraphInstantiate", Site.API_ENTER, {"h_graph": 0xC, "ph_graph_exec": 0})
    _api(sub, "cuGraphInstantiate", Site.API_EXIT, {"h_graph": 0xC, "ph_graph_exec": _cell(0xF)})
    assert heard.calls == [("instantiated", 0xC, 0xF, 10)]


def test_a_failed_instantiation_makes_nothing_and_a_bad_callback_is_kept_not_raised() -> None:
    sub, heard = _subscriber()
    _api(sub, "cuGraphInstantiateWithFlags", Site.API_ENTER, {"h_graph": 1, "ph_graph_exec": 0})
    _api(sub, "cuGraphInstantiateWithFlags", Site.API_EXIT, {"h_graph": 1, "ph_graph_exec": 0},
         code=1)
    assert heard.calls == []
    _api(sub, "cuGraphExecUpdate", Site.API_EXIT, {})  # no h_graph_exec: the read fails
    assert len(sub.errors) == 1 and "AttributeError" in sub.errors[0]


def test_params_class_names_follow_cupti_python() -> None:
    assert params_class_name("cuGraphLaunch_ptsz") == "CuGraphLaunchPtszParams"
    assert params_class_name("cuStreamBeginCapture_v2") == "CuStreamBeginCaptureV2Params"


def test_every_call_and_resource_named_exists_in_the_installed_cupti_python() -> None:
    import importlib

    import pytest

    try:
        cupti = importlib.import_module("cupti.cupti")
        params = importlib.import_module("cupti.cuda_driver_api_params")
    except ImportError as exc:
        pytest.skip(f"cupti-python is not importable here: {exc}")
    from graphcert.cupti.callbacks import RESOURCES

    assert [n for n in DRIVER_CALLS if not hasattr(cupti.DriverApiTraceCbid, n)] == []
    assert [n for n in DRIVER_CALLS if not hasattr(params, params_class_name(n))] == []
    assert [n for n in RESOURCES if not hasattr(cupti.CallbackIdResource, n)] == []


class FakeCuptiError(Exception):
    """cupti-python's cuptiError reads "ERROR_NAME (code)"."""


class _OldName:
    """SubscriberParams whose old_subscriber_name is what CUPTI left there."""

    def __init__(self, old: str | None) -> None:
        self.ptr, self.struct_size, self.subscriber_name = 1, 0, ""
        self._old = old

    @property
    def old_subscriber_name(self) -> str:
        if self._old is None:  # an unwritten buffer: bytes that are not UTF-8
            raise UnicodeDecodeError("utf-8", b"\xa0", 0, 1, "invalid start byte")
        return self._old


def _fake_cupti(v1: str | None, v2: str | None = None, old: str | None = None) -> Any:
    """subscribe answers `v1` (an ERROR_ name, or None: a handle), subscribe_v2 `v2`."""
    calls: list[str] = []

    def answer(name: str | None, call: str) -> int:
        calls.append(call)
        if name is not None:
            raise FakeCuptiError(f"{name} (1)")
        return 77

    return SimpleNamespace(
        calls=calls, SUBSCRIBER_PARAMS_SIZE=40, SubscriberParams=lambda: _OldName(old),
        subscribe=lambda cb, ud: answer(v1, "v1"),
        subscribe_v2=lambda cb, ud, ptr: answer(v2, "v2"))


def _refusal(cupti: Any) -> str:
    import pytest

    from graphcert.cupti.callbacks import subscribe
    from graphcert.cupti.library import CuptiUnavailable

    with pytest.raises(CuptiUnavailable) as caught:
        subscribe(cupti, lambda *a: None)
    return caught.value.one_line()


def test_plain_subscribe_is_used_and_v2_never_asked_when_it_works() -> None:
    from graphcert.cupti.callbacks import subscribe

    cupti = _fake_cupti(None)
    assert subscribe(cupti, lambda *a: None) == 77 and cupti.calls == ["v1"]


def test_an_invalid_parameter_is_named_as_it_is_not_as_another_profiler() -> None:
    cupti = _fake_cupti("ERROR_INVALID_PARAMETER", "ERROR_INVALID_PARAMETER", old="`K")
    line = _refusal(cupti)
    assert "ERROR_INVALID_PARAMETER" in line and "held" not in line and "`K" not in line
    assert cupti.calls == ["v1", "v2"]
    both = _refusal(_fake_cupti("ERROR_INVALID_PARAMETER", "ERROR_UNKNOWN"))
    assert "ERROR_INVALID_PARAMETER" in both and "subscribe_v2 gave ERROR_UNKNOWN" in both


def test_v2_is_tried_when_plain_subscribe_fails_and_a_missing_driver_is_exit_3() -> None:
    from graphcert.cupti.callbacks import subscribe
    from graphcert.errors import NoDriverError

    cupti = _fake_cupti("ERROR_INVALID_PARAMETER", None)
    assert subscribe(cupti, lambda *a: None) == 77 and cupti.calls == ["v1", "v2"]
    import pytest

    nodriver = SimpleNamespace(subscribe=lambda cb, ud: (_ for _ in ()).throw(
        FakeCuptiError("CUDA driver is not found (libcuda.so.1: cannot open)")))
    with pytest.raises(NoDriverError):
        subscribe(nodriver, lambda *a: None)


def test_a_held_cupti_names_the_holder_only_when_cupti_wrote_one() -> None:
    named = _refusal(_fake_cupti("ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED",
                                 "ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED", "CUPTI for Kineto"))
    assert "held by another profiler (CUPTI for Kineto)" in named
    for old in (None, "`K", "8@G\x1d0V"):  # garbage in an unwritten buffer is never printed
        line = _refusal(_fake_cupti("ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED",
                                    "ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED", old))
        assert "held by another profiler: " in line and (old is None or old not in line)


def test_a_holder_gone_between_the_two_calls_leaves_the_v2_subscriber() -> None:
    from graphcert.cupti.callbacks import subscribe

    cupti = _fake_cupti("ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED", None)
    assert subscribe(cupti, lambda *a: None) == 77 and cupti.calls == ["v1", "v2"]


def test_a_silenced_subscriber_hears_nothing_more_and_asks_nothing_of_cupti() -> None:
    """silence() (the runner's answer to a signal that keeps landing in a callback) runs on a
    timer thread: it only sets a flag, so any callback still delivered returns at once and
    no CUPTI call is made from that thread (one could wait on a lock the program's thread
    holds inside a callback)."""
    sub, heard = _subscriber()
    asked: list[tuple[int, int, int]] = []
    sub._cupti = SimpleNamespace(**vars(FAKE_CUPTI),  # type: ignore[assignment]
                                 enable_domain=lambda on, h, d: asked.append((on, h, d)))
    sub._handle = 7
    _api(sub, "cuGraphExecUpdate", Site.API_EXIT, {"h_graph_exec": 0xE1, "h_graph": 0xB})
    before = list(heard.calls)
    assert before, "the fake update was heard before silence"
    sub.silence()
    assert asked == []
    _api(sub, "cuGraphExecUpdate", Site.API_EXIT, {"h_graph_exec": 0xE1, "h_graph": 0xB})
    _resource(sub, Resource.GRAPHEXEC_DESTROY_STARTING, 0xA, 0xE1)
    assert heard.calls == before


def test_a_frame_inside_a_callback_counts_before_its_busy_flag_is_set() -> None:
    """A signal can land on the first lines of a callback, before the busy flag: the frame it
    interrupted (or one under it) is this module's, and in_callback(frame) says so."""
    import sys

    from graphcert.cupti import callbacks

    frames: list[object] = []

    class Catcher:
        def silence(self) -> None:  # called from callbacks.silence(): its caller's frame
            frames.append(sys._getframe())

    callbacks._ACTIVE.append(Catcher())  # type: ignore[arg-type]
    try:
        callbacks.silence()
    finally:
        callbacks._ACTIVE.pop()
    assert not callbacks.in_callback()  # no flag set, no frame given
    assert callbacks.in_callback(frames[0])  # type: ignore[arg-type]
    assert not callbacks.in_callback(sys._getframe())  # the test's own stack
