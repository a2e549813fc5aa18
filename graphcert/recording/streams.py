"""Read the injection collector's run folder (docs/record-streams.md): one JSON-Lines stream
per process into that process's Recording, its analysis and who it was. Pure: no CUDA, no
CUPTI; the same events graphcert.cupti.record makes in place, with the same rules (keys in
order of instantiation, a reused executable handle gets a new key, launches of executables
not seen are dropped).

Host times (`at_ns`) count from the process line's `at`; kernel, marker and launch-call
times stay CUPTI's, as the analysis expects.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphcert.errors import InputError, single_line
from graphcert.recording.events import (
    Destroyed,
    Instantiated,
    KernelRun,
    LaunchCall,
    Launched,
    Made,
    Marker,
    MarkerEdge,
    Recording,
    Updated,
)
from graphcert.recording.processes import (
    GpuSeen,
    GraphMemory,
    ProcessEnded,
    ProcessInfo,
    ProcessRecorded,
    process_recorded,
)
from graphcert.recording.rawsnapshot import snapshot_of
from graphcert.recording.streamfields import (
    Bad,
    int_field,
    int_fields,
    opt_int_field,
    opt_str_field,
    str_field,
    stream_name_key,
)

STREAM_GLOB = "proc-*-*.jsonl"
TAKEN = ("made {n} graph(s) but no kernel or graph-launch record reached graphcert: another "
         "CUPTI client (a profiler in the program?) took CUPTI's activity records")
LOST = ("made {n} graph(s) but no kernel or graph-launch record reached graphcert before it "
        "ended without an end line (CUPTI's unflushed activity records die with a killed "
        "process)")


_GLAUNCH = ("graph_id", "corr", "start", "end")
_GRAPHMEM = ("used_current", "used_high", "reserved_current", "reserved_high")
_KERNEL = ("name", "start", "end", "graph_id", "corr")
_CALL = ("corr", "tid", "at")


@dataclass(frozen=True)
class ProcessStream:
    """One process's stream, read: who it was and how it ended with its analysis
    (`process`), the events themselves (`recording`), the CUPTI version and collector source
    hash it was recorded with, and the file. `wall_ns`: its process line's CLOCK_REALTIME
    (None when the stream has no process line)."""

    process: ProcessRecorded
    recording: Recording
    cupti_version: int | None
    collector: str | None
    path: Path
    wall_ns: int | None = None


class _Reader:
    """The state one stream's lines build up, in stream order."""

    def __init__(self) -> None:
        self.head: dict[str, Any] | None = None  # the process line
        self.t0 = 0  # the process line's `at`
        self.gpus: dict[int, GpuSeen] = {}
        self.problems: list[str] = []
        self.strings: dict[int, str] = {}
        self.capturing: dict[int, int] = {}  # stream handle -> capture begin
        self.captured: dict[int, int | None] = {}  # graph handle -> capture ns
        self.keys: dict[int, int] = {}  # live executable handle -> key
        self.exec_ids: dict[int, int] = {}  # CUPTI id of an executable -> key
        self.inst: list[Instantiated] = []
        self.updated: list[Updated] = []
        self.destroyed: list[Destroyed] = []
        self.glaunch: list[tuple[int, ...]] = []  # _GLAUNCH's fields
        self.kernels: list[tuple[int, ...]] = []  # _KERNEL's fields
        self.calls: list[LaunchCall] = []
        self.markers: list[tuple[int, MarkerEdge, int, int, int]] = []
        self.dropped = 0
        self.memory: dict[int, GraphMemory] = {}
        self.memory_unread: list[int] = []  # ordinals whose graphmem line held nulls
        self.end: dict[str, Any] | None = None
        self.unreadable = 0
        self.unknown: dict[str, int] = {}
        self.exec_d = False  # a later stream of this process records the program it exec'd

    def since(self, ns: int) -> int:
        return max(0, ns - self.t0)

    def line(self, rec: object) -> None:
        if not isinstance(rec, dict) or not isinstance(rec.get("t"), str):
            raise Bad("t")
        t = rec["t"]
        if self.head is None and t != "process":
            raise Bad("process line first")
        handler = _HANDLERS.get(t)
        if handler is None:
            kind = single_line(t)[:40]
            self.unknown[kind] = self.unknown.get(kind, 0) + 1
            return
        handler(self, rec)

    def on_process(self, r: dict[str, Any]) -> None:
        if self.head is not None:
            raise Bad("a second process line")
        argv = r.get("argv")
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise Bad("argv")
        int_field(r, "pid"), int_field(r, "ppid"), int_field(r, "at"), opt_int_field(r, "wall_ns")
        self.head, self.t0 = r, r["at"]

    def on_device(self, r: dict[str, Any]) -> None:
        ordinal = int_field(r, "ordinal")  # uuid and name are null where the driver gave none
        self.gpus[ordinal] = GpuSeen(ordinal, opt_str_field(r, "uuid") or "unknown",
                                     opt_str_field(r, "name") or "unknown")

    def on_error(self, r: dict[str, Any]) -> None:
        what, result, detail = str(r.get("what")), str(r.get("result")), r.get("detail")
        self.problems.append(single_line(
            f"{detail} left off by {what}: the record is incomplete"
            if what == "GRAPHCERT_COLLECTOR_OFF"  # a benchmark's breakdown, no real record
            else f"CUPTI refused the collector: {what} gave {result}"
            + (f" ({detail})" if detail else "") if what.startswith("cupti")
            else f"the collector's {what} gave {result}" + (f" ({detail})" if detail else "")))

    def on_str(self, r: dict[str, Any]) -> None:
        self.strings[int_field(r, "id")] = str_field(r, "s")

    def on_capture_begin(self, r: dict[str, Any]) -> None:
        self.capturing[int_field(r, "stream")] = int_field(r, "at")

    def on_capture_end(self, r: dict[str, Any]) -> None:
        stream, graph, at = int_fields(r, ("stream", "graph", "at"))
        begin = self.capturing.pop(stream, None)
        self.captured[graph] = None if begin is None else max(0, at - begin)

    def on_inst(self, r: dict[str, Any]) -> None:
        handle, graph, t0, t1 = (int_field(r, k) for k in ("exec", "graph", "t0", "t1"))
        exec_id, graph_id = opt_int_field(r, "exec_id"), opt_int_field(r, "graph_id")
        if r.get("snapshot") is not None:
            snapshot, why = snapshot_of(r["snapshot"])
        else:
            snapshot = None
            why = r.get("read_error") if isinstance(r.get("read_error"), str) else None
            why = single_line(why)[:300] if why else "the collector wrote no snapshot and no reason"
        key = len(self.inst)
        self.keys[handle] = key
        if exec_id is not None:
            self.exec_ids[exec_id] = key
        self.inst.append(Instantiated(
            key, tuple(i for i in (exec_id, graph_id) if i is not None),
            Made.CAPTURE if graph in self.captured else Made.EXPLICIT, self.since(t0),
            max(0, t1 - t0), self.captured.get(graph), snapshot, why))

    def on_update(self, r: dict[str, Any]) -> None:
        key = self.keys.get(int_field(r, "exec"))
        code, at, result = int_field(r, "code"), int_field(r, "at"), str_field(r, "result")
        if key is not None:
            self.updated.append(Updated(key, self.since(at), code == 0, result))

    def on_destroy(self, r: dict[str, Any]) -> None:
        handle, at = int_fields(r, ("exec", "at"))
        key = self.keys.pop(handle, None)
        if key is not None:
            self.destroyed.append(Destroyed(key, self.since(at)))

    def on_glaunch(self, r: dict[str, Any]) -> None:
        self.glaunch.append(int_fields(r, _GLAUNCH))

    def on_kernel(self, r: dict[str, Any]) -> None:
        self.kernels.append(int_fields(r, _KERNEL))

    def on_call(self, r: dict[str, Any]) -> None:
        self.calls.append(LaunchCall(*int_fields(r, _CALL)))

    def on_marker(self, r: dict[str, Any]) -> None:
        try:
            edge = MarkerEdge(r.get("edge"))
        except ValueError:
            raise Bad("edge") from None
        self.markers.append((int_field(r, "id"), edge, opt_int_field(r, "name") or 0,
                             int_field(r, "tid"), int_field(r, "at")))

    def on_dropped(self, r: dict[str, Any]) -> None:
        self.dropped += int_field(r, "n")

    def on_graphmem(self, r: dict[str, Any]) -> None:
        ordinal = int_field(r, "ordinal")
        values = [opt_int_field(r, k) for k in _GRAPHMEM]
        # null: cuDeviceGetGraphMemAttribute failed for that field (not a bad line)
        if any(v is None for v in values):
            self.memory_unread.append(ordinal)
            return
        self.memory[ordinal] = GraphMemory(*(int(v or 0) for v in values))

    def on_end(self, r: dict[str, Any]) -> None:
        if r.get("how") not in ("exit", "_exit"):
            raise Bad("how")
        opt_int_field(r, "code"), opt_int_field(r, "at")
        self.end = r

    def name(self, sid: int, missing: set[int]) -> str:
        found = self.strings.get(sid)
        if found is None:
            missing.add(sid)
            return f"(string {sid} not in the stream)"
        return found

    def recording(self, nvtx_unavailable: str | None) -> Recording:
        missing: set[int] = set()
        kernels = tuple(KernelRun(self.name(n, missing), s, e, g, c)
                        for n, s, e, g, c in self.kernels)
        markers = tuple(Marker(i, edge, self.name(n, missing) if n else "", tid, at)
                        for i, edge, n, tid, at in self.markers)
        launched = tuple(Launched(key, self.since(s), c, s, e) for g, c, s, e in self.glaunch
                         if (key := self.exec_ids.get(g)) is not None)
        if missing:
            self.problems.append(f"{len(missing)} string id(s) were used but never defined "
                                 "in the stream")
        return Recording(tuple(self.inst), launched, tuple(self.updated),
                         tuple(self.destroyed), kernels, self.dropped, markers,
                         tuple(self.calls), nvtx_unavailable)


_HANDLERS: dict[str, Callable[[_Reader, dict[str, Any]], None]] = {
    name.removeprefix("on_"): method for name, method in vars(_Reader).items()
    if name.startswith("on_")}
"""The record types of docs/record-streams.md, each to its handler."""


def _lines(path: Path) -> tuple[list[bytes], bytes | None]:
    """The whole lines of a stream and its torn last line (None when it ends whole)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read the stream: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    torn = lines.pop()  # after the last newline: b"" when the stream ends whole
    return lines, (torn or None)


def _pid_of(path: Path) -> int:
    """The pid the file name gives, 0 if it gives none."""
    return stream_name_key(path.name)[0]


def _ending(reader: _Reader, outlived: bool, exit_code: int | None
            ) -> tuple[ProcessEnded, int | None]:
    if reader.end is None and reader.exec_d:
        return ProcessEnded.EXEC, None
    if reader.end is None:
        return (ProcessEnded.OUTLIVED if outlived else ProcessEnded.KILLED), exit_code
    if reader.end["how"] == "_exit":
        code = reader.end.get("code")
        return ProcessEnded.EXIT_NOW, exit_code if exit_code is not None else code
    return ProcessEnded.EXIT, exit_code


def _memory(reader: _Reader) -> tuple[tuple[GraphMemory, ...], str | None]:
    read = tuple(reader.memory[k] for k in sorted(reader.memory))
    if unread := sorted(set(reader.memory_unread) - set(reader.memory)):
        return read, (f"the driver did not give the graph memory of device(s) "
                      f"{', '.join(map(str, unread))} (cuDeviceGetGraphMemAttribute failed), "
                      "so it was not read")
    if reader.memory:
        return read, None
    if reader.end is None and reader.exec_d:
        return (), "the process exec'd another program, so its graph memory was not read"
    if reader.end is None:
        return (), ("the stream has no end line (the process was killed, or outlived the "
                    "command), so its graph memory at the end was not read")
    if not reader.gpus:
        return (), "the process made no CUDA context"
    return (), "the collector wrote no graph memory at the process's end"


# what a line of the wrong form raises (JSONDecodeError and Bad are ValueErrors; a JSON
# nested past Python's recursion limit raises RecursionError)
_UNREADABLE = (ValueError, TypeError, KeyError, RecursionError)


def _read(path: Path) -> _Reader:
    lines, torn = _lines(path)
    reader = _Reader()
    for raw in lines:
        try:
            reader.line(json.loads(raw.decode("utf-8", "replace")))
        except _UNREADABLE:
            reader.unreadable += 1
    if torn is not None:
        # a last line without its newline: whole if it parses (only the newline was lost),
        # else a write the process died in, which matters only if it ended by itself
        try:
            reader.line(json.loads(torn.decode("utf-8", "replace")))
        except _UNREADABLE:
            if reader.end is not None:
                reader.unreadable += 1
    return reader


def read_stream(path: str | Path, *, outlived: bool = False, exit_code: int | None = None,
                nvtx_unavailable: str | None = None) -> ProcessStream:
    """One process's stream read and analysed. `outlived`: the runner found the process
    alive after the command ended; `exit_code`: what the runner knows of it (overrides)."""
    p = Path(path)
    return _stream(p, _read(p), outlived, exit_code, nvtx_unavailable)


def _stream(path: Path, reader: _Reader, outlived: bool, exit_code: int | None,
            nvtx_unavailable: str | None) -> ProcessStream:
    recording = reader.recording(nvtx_unavailable)
    if reader.unreadable:
        reader.problems.append(f"{reader.unreadable} line(s) of the stream could not be read")
    if reader.unknown:
        kinds = ", ".join(sorted(reader.unknown))
        reader.problems.append(f"{sum(reader.unknown.values())} line(s) of record types this "
                               f"graphcert does not know were skipped ({kinds})")
    if reader.inst and not reader.kernels and not reader.glaunch:
        text = TAKEN if reader.end is not None else LOST
        reader.problems.append(text.format(n=len(reader.inst)))
    head = reader.head
    if head is None:
        reader.problems.insert(0, "the stream has no process line (the process ended before "
                                  "its first flush)")
    ended, code = _ending(reader, outlived, exit_code)
    info = ProcessInfo(
        head["pid"] if head else _pid_of(path), head["ppid"] if head else 0,
        tuple(head["argv"]) if head else (), tuple(reader.gpus[k] for k in sorted(reader.gpus)),
        ended, code, tuple(reader.problems))
    memory, why = _memory(reader)
    version = head.get("cupti_version") if head else None
    collector = head.get("collector") if head else None
    return ProcessStream(
        process_recorded(info, recording, memory, why), recording,
        version if isinstance(version, int) and not isinstance(version, bool) else None,
        collector if isinstance(collector, str) else None, path,
        head.get("wall_ns") if head else None)


def read_run(folder: str | Path, *, outlived: frozenset[int] = frozenset(),
             exit_codes: Mapping[int, int] | None = None,
             nvtx_unavailable: str | None = None) -> tuple[ProcessStream, ...]:
    """Every process stream of a run folder, in order of their process lines' wall clock.
    `outlived`: pids found alive after the command ended (the latest stream of a pid: a pid
    is reused only once its process is gone); `exit_codes`: exit codes the runner knows by
    pid (the earliest process of a pid, the command's own, in its last program: the streams
    of one process, proc-<pid>-<start>[-e<n>], are the programs it exec'd, in order)."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"{root}: not a run folder (no such directory)",
                         hint="pass the folder graphcert record named in GRAPHCERT_RUN_DIR")
    codes = exit_codes or {}
    read = [(p, _read(p)) for p in root.glob(STREAM_GLOB) if p.is_file()]
    keys = [stream_name_key(p.name) for p, _ in read]
    pids = [r.head["pid"] if r.head else keys[i][0] for i, (_, r) in enumerate(read)]
    walls = [r.head.get("wall_ns") if r.head else None for _, r in read]
    process = [(pids[i], keys[i][1]) for i in range(len(read))]  # (pid, start ticks)
    order = sorted(range(len(read)), key=lambda i: (
        not isinstance(walls[i], int), walls[i] if isinstance(walls[i], int) else 0, pids[i],
        keys[i], read[i][0].name))
    first: dict[int, tuple[int, int]] = {}  # pid -> its earliest process
    last: dict[int, int] = {}  # pid -> its latest stream
    program: dict[tuple[int, int], int] = {}  # process -> the stream of its last program
    for i in sorted(range(len(read)), key=lambda i: (keys[i][1:], order.index(i))):
        first.setdefault(pids[i], process[i])
        last[pids[i]] = program[process[i]] = i
    out = []
    for i in order:
        (path, reader), pid = read[i], pids[i]
        reader.exec_d = program[process[i]] != i and keys[i] != (0, 0, 0)
        known = first[pid] == process[i] and program[process[i]] == i
        out.append(_stream(path, reader, pid in outlived and last[pid] == i,
                           codes.get(pid) if known else None, nvtx_unavailable))
    return tuple(out)


__all__ = ["STREAM_GLOB", "TAKEN", "ProcessStream", "read_run", "read_stream"]
