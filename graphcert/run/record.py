"""`graphcert.record()`: the body of a `with` block recorded in place, in this process, under
one CUPTI recorder, then analysed and, with an output folder, certified (the source graphs'
snapshots in a folder beside the certificate). `graphcert record -- COMMAND` records a whole
process tree through the injection collector instead (record_command, record_run).

How the body ended is the record's: an exception gives 1, Ctrl-C 130, sys.exit(n) n. In each
case what was recorded is kept and the certificate is written whole (through
write_certificate's atomic write) or not at all. Also here: the workload identity of a
recorded program (program_identity), which both ways share.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Protocol

from graphcert.cert.document import certificate_filename
from graphcert.kinds.record.result import Ended, GraphMemory, RecordResult
from graphcert.options import Options
from graphcert.recording import Recorded, Recording, analyse
from graphcert.recording.processes import ProcessEnded, ProcessInfo, ProcessRecorded

if TYPE_CHECKING:
    from graphcert.model import GraphSnapshot

EXIT_CODES = {Ended.INTERRUPTED: 130, Ended.EXCEPTION: 1}


@dataclass(frozen=True)
class Ran:
    """How the program ended."""

    exit_code: int
    ended: Ended
    detail: str | None
    wall_s: float


REDELIVER_S = 0.002  # a signal that landed in a CUPTI callback is sent again this soon


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """While the body of graphcert.record() runs (main thread only), SIGINT raises
    KeyboardInterrupt in the program. A SIGINT whose handler runs inside one of graphcert's
    CUPTI callbacks (every graph launch runs one, in the program's thread) is not raised
    there: cupti-python would swallow the exception and the program would run on. The
    callbacks are silenced and the signal is sent to the main thread again a moment later,
    so it lands in the program's own code (a 2,000-step serve loop recorded in place never
    stopped on an H100 while the signal was only sent again)."""
    from graphcert.cupti.callbacks import in_callback, silence

    main = threading.main_thread().ident
    live = threading.Event()

    def again(signum: int) -> None:
        # The callbacks go quiet first: a program that launches graphs back to back spends
        # most of its time in them, and a signal sent again would keep landing there.
        silence()
        if live.is_set() and main is not None:
            signal.pthread_kill(main, signum)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if in_callback(frame):
            timer = threading.Timer(REDELIVER_S, again, (signum,))
            timer.daemon = True
            timer.start()
            return
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGINT, on_signal)
    except ValueError:  # not the main thread
        yield
        return
    live.set()
    try:
        yield
    finally:
        live.clear()
        signal.signal(signal.SIGINT, previous)


def _exit_code(code: object) -> int:
    """sys.exit's argument as Python's exit status: None 0, an int itself, else 1 (printed)."""
    if code is None:
        return 0
    if isinstance(code, int) and not isinstance(code, bool):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def graph_reader(device: int) -> Callable[[int], GraphSnapshot]:
    """graphcert's snapshot reader, set up before the program runs (so no import happens
    inside a driver callback)."""
    from graphcert.cuda.handles import read_foreign_graph
    from graphcert.sources import prepare_reader

    prepare_reader()
    return lambda address: read_foreign_graph(address, meta={"source": "record"},
                                              device=device)


def graph_memory(device: int) -> tuple[GraphMemory | None, str | None]:
    """The driver's graph memory now, or None with the reason."""
    try:
        from graphcert.cuda.handles import graph_memory_of

        m = graph_memory_of(device)
    except Exception as exc:  # noqa: BLE001 (a figure that cannot be read is a value)
        return None, f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    return GraphMemory(m["used_current"], m["used_high"], m["reserved_current"],
                       m["reserved_high"]), None


def about_cupti(detail: str | None) -> bool:
    """A program's failure that names CUPTI (its own profiler could not have CUPTI)."""
    return detail is not None and "CUPTI" in detail.upper()


def check_cupti_failure(ran: Ran) -> None:
    """CuptiUnavailable when the program failed in CUPTI: graphcert.record() holds CUPTI's
    one subscriber, so a profiler the program starts itself (torch.profiler) may fail."""
    from graphcert.cupti.library import CuptiUnavailable

    if ran.ended is Ended.EXCEPTION and about_cupti(ran.detail):
        raise CuptiUnavailable(
            f"the program failed in CUPTI, which graphcert.record() holds ({ran.detail})",
            hint="record the program without its own profiler (torch.profiler, Nsight) running")


def check_not_taken(rec: Recording) -> None:
    """CuptiUnavailable when the program made graphs (heard through callbacks) but no
    activity record reached graphcert, neither a kernel's nor a graph launch's: another CUPTI
    client in the program (torch.profiler, Nsight) took CUPTI's activity records over. Making
    a graph runs kernels (a capture's warm-up at least), so a whole recording has some."""
    from graphcert.cupti.library import CuptiUnavailable

    if rec.instantiated and not rec.kernels and not rec.launched:
        raise CuptiUnavailable(
            f"the program made {len(rec.instantiated)} graph(s) but no kernel or graph launch "
            "record reached graphcert: the program ran another CUPTI client (torch.profiler, "
            "Nsight?) that took CUPTI over",
            hint="record the program without its own profiler running")


def record_result(argv: Sequence[str], ran: Ran, recorded: Recorded, device: int
                  ) -> RecordResult:
    """The in-place recording as a run of one process (this one), collector "in-place"."""
    from graphcert.cupti.record import cupti_version
    from graphcert.run import environment

    mem, why = graph_memory(device)
    processes = (ProcessRecorded(ProcessInfo(os.getpid(), os.getppid(), tuple(argv),
                                             environment.gpu_seen(device), ProcessEnded.IN_PLACE,
                                             ran.exit_code), recorded, (mem,) if mem else (), why),)
    return RecordResult(tuple(argv), ran.exit_code, ran.ended, ran.wall_s, processes,
                        cupti_version(), "in-place", ran.detail,
                        verdict=RecordResult.judge(ran.exit_code, ran.ended, processes,
                                                   ran.detail))


def write_record(result: RecordResult, rec: Recording, out_dir: Path, options: Options,
                 device: int) -> tuple[Path, RecordResult]:
    """The record certificate and, in `<certificate stem>.snapshots/`, one snapshot file per
    distinct topology and shape (readable by inventory and diff); the path and the result as
    written (each graph naming its snapshot file)."""
    from graphcert.run import environment

    env = environment.environment(device, options.git)
    ref, name = program_identity(result.program)
    about = environment.Subject("record", environment.identity(ref, name, "record"), name)
    path = out_dir / certificate_filename("record", name,
                                          environment.gpu_label(env, options.uuid_names))
    files = write_snapshots((rec,), path.with_suffix(".snapshots"))
    result = replace(result, processes=tuple(name_snapshots(p, files)
                                             for p in result.processes))
    return environment.write(result, out_dir, about, env, key=options.signing_key,
                             uuid_names=options.uuid_names), result


def write_snapshots(recordings: Iterable[Recording], folder: Path) -> dict[str, str]:
    """Each distinct topology and shape instantiated in any of `recordings` saved once in
    `folder` (made only when there is one), readable by inventory and diff; file name by key
    `<topology 12>-<shape 8>`."""
    from graphcert.model import save_snapshot

    files: dict[str, str] = {}
    for rec in recordings:
        for inst in rec.instantiated:
            snap = inst.snapshot
            if snap is None:
                continue
            key = f"{snap.topology_hash[:12]}-{snap.shape_hash[:8]}"
            if key not in files:
                folder.mkdir(parents=True, exist_ok=True)
                save_snapshot(folder / f"{key}.json", snap)
                files[key] = f"{key}.json"
    return files


def name_snapshots(process: ProcessRecorded, files: Mapping[str, str]) -> ProcessRecorded:
    """The process with each graph row naming its snapshot file."""
    rows = tuple(replace(g, snapshot_file=files.get(f"{g.topology_hash[:12]}-"
                                                    f"{(g.shape_hash or '')[:8]}"))
                 if g.topology_hash else g for g in process.recorded.graphs)
    return replace(process, recorded=replace(process.recorded, graphs=rows))


def program_identity(program: Sequence[str]) -> tuple[str, str]:
    """The program as a workload reference (`script.py:__main__` or `module:__main__`, so
    the gate digests its sources and local imports) with its arguments as an option
    (`serve_torch.py:__main__[args=--fallback]`, or their digest where they hold a character
    a reference cannot), so runs with other flags are other workloads to the gate, and its
    name: the script's stem and its arguments (`serve_torch --fallback`)."""
    module = program[0] == "-m"
    target, args = (program[1], program[2:]) if module else (program[0], program[1:])
    stem = target if module else Path(target).stem
    ref = f"{target}:__main__"
    if args:
        joined = " ".join(args)
        if set(joined) & set("[],=") or len(joined) > 100:
            joined = "sha256-" + hashlib.sha256(joined.encode()).hexdigest()[:12]
        ref += f"[args={joined}]"
    return ref, " ".join([stem, *args])[:200]


class GraphRecorder(Protocol):
    """What a session uses of its recorder (graphcert.cupti.record.Recorder; tests pass a
    fake): recording between enter and close, then what it saw and its callback errors."""

    def __enter__(self) -> object: ...

    def close(self) -> None: ...

    def recording(self) -> Recording: ...

    @property
    def errors(self) -> tuple[str, ...]: ...


class RecordSession:
    """The recorder around the body of a `with graphcert.record():` block. On exit (however
    the body ends) the recording is analysed into `result` and, with `out_dir`, certified."""

    def __init__(self, program: Sequence[str], *, out_dir: Path | None = None,
                 options: Options | None = None, device: int = 0,
                 recorder: GraphRecorder | None = None) -> None:
        self.program = tuple(program)
        self._out_dir, self._options, self._device = out_dir, options, device
        if recorder is None:  # tests pass a fake with the same methods
            from graphcert.cupti.record import Recorder

            recorder = Recorder(graph_reader(device))
        self._recorder = recorder
        self._signals = contextlib.ExitStack()
        self._start = 0.0
        self.result: RecordResult | None = None
        self.certificate: Path | None = None
        self.errors: tuple[str, ...] = ()

    def __enter__(self) -> RecordSession:
        # A program that leaves Ctrl-C to Python: the same handler, deferred out of CUPTI
        # callbacks (the program's own handler is left alone)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._signals.enter_context(_signals_raise())
        try:
            self._recorder.__enter__()
        except BaseException:
            self._signals.close()
            raise
        self._start = time.perf_counter()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._signals.close()
        self._recorder.close()
        wall = time.perf_counter() - self._start
        if et is None:
            ran = Ran(0, Ended.EXIT, None, wall)
        elif issubclass(et, KeyboardInterrupt):
            ran = Ran(EXIT_CODES[Ended.INTERRUPTED], Ended.INTERRUPTED, None, wall)
        elif issubclass(et, SystemExit):
            ran = Ran(_exit_code(ev.code if isinstance(ev, SystemExit) else 1), Ended.EXIT,
                      None, wall)
        else:
            ran = Ran(1, Ended.EXCEPTION, f"{et.__name__}: {ev}".splitlines()[0][:300], wall)
        self.finish(ran)  # the body's exception (if any) still propagates

    def finish(self, ran: Ran) -> None:
        """Analyse (and with an output folder, certify) after the body ended as `ran`."""
        self._recorder.close()
        rec = self._recorder.recording()
        self.errors = self._recorder.errors
        check_cupti_failure(ran)
        check_not_taken(rec)
        self.result = record_result(self.program, ran, analyse(rec), self._device)
        if self._out_dir is not None:
            self.certificate, self.result = write_record(self.result, rec, self._out_dir,
                                                         self._options or Options(),
                                                         self._device)


__all__ = ["Ran", "about_cupti", "check_cupti_failure", "check_not_taken", "graph_reader",
           "RecordSession", "name_snapshots", "program_identity", "record_result", "write_record",
           "write_snapshots"]
