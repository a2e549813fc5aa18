"""Typed results of a run over several GPUs (`--device all`): one outcome per worker, and the
values a worker sends its parent (progress events, its error). Pure.

A worker is a `python -m graphcert.worker` child given one GPU's job (graphcert.run.worker);
its outcome holds what it printed, its exit code and, when it failed, its error. The run's
exit code is the worst worker's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from graphcert.errors import GraphcertError
from graphcert.fileio import parse_json
from graphcert.jsontypes import (
    Doc,
    JSONObject,
    JSONValue,
    as_float,
    as_int,
    as_opt_doc,
    as_opt_str,
    as_str,
)

ProgressKind = Literal["total", "advance"]


@dataclass(frozen=True)
class ProgressEvent:
    """A worker's progress: first the total of units, then each advance by `units`."""

    what: ProgressKind
    units: float

    def to_json(self) -> JSONObject:
        return {"progress": self.what, "units": self.units}

    @classmethod
    def from_json(cls, doc: Doc) -> ProgressEvent:
        what = doc["progress"]
        # spelled out so the Literal is narrowed without a cast
        kind: ProgressKind
        if what == "total":
            kind = "total"
        elif what == "advance":
            kind = "advance"
        else:
            raise ValueError(f"not a progress event: {what!r}")
        return cls(kind, as_float(doc, "units"))


EventSink = Callable[[ProgressEvent], None]  # where a worker sends its progress events


@dataclass(frozen=True)
class WorkerError:
    """Why a worker failed: the one-line message and fix the command line would print, and
    the exit status it gave."""

    message: str
    hint: str | None
    exit_status: int

    @classmethod
    def of(cls, exc: GraphcertError) -> WorkerError:
        return cls(exc.message, exc.hint, int(exc.exit_code))

    def as_error(self) -> GraphcertError:
        """The error again, to raise in the parent (same line, same exit code)."""
        return GraphcertError(self.message, hint=self.hint, exit_code=self.exit_status)

    def one_line(self) -> str:
        return self.as_error().one_line()

    def to_json(self) -> JSONObject:
        return {"message": self.message, "hint": self.hint, "exit_status": self.exit_status}

    @classmethod
    def from_json(cls, doc: Doc) -> WorkerError:
        return cls(as_str(doc, "message"), as_opt_str(doc, "hint"), as_int(doc, "exit_status"))


def short_uuid(uuid: str) -> str:
    """The first 8 hex digits of a GPU UUID (`GPU-1a2b3c4d-...` -> `1a2b3c4d`)."""
    return uuid.removeprefix("GPU-").replace("-", "")[:8] or "nouuid"


@dataclass(frozen=True)
class Gpu:
    """One GPU a worker runs on: its index on this machine, name and UUID."""

    index: int
    name: str
    uuid: str

    @property
    def label(self) -> str:
        return f"GPU {self.index} ({self.name}, {self.uuid})"

    def to_json(self) -> JSONObject:
        return {"index": self.index, "name": self.name, "uuid": self.uuid}


def worst_exit(codes: list[int]) -> int:
    """The worst exit code: the highest; a worker killed by signal s counts as 128 + s."""
    return max((128 - c if c < 0 else c for c in codes), default=0)


@dataclass(frozen=True)
class WorkerOutcome:
    """What one GPU's worker did: exit code, seconds, its stdout, its messages, its error."""

    gpu: Gpu
    exit_code: int
    seconds: float
    stdout: str
    messages: tuple[str, ...] = ()
    error: WorkerError | None = None  # why a worker that failed did

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def output_json(self) -> JSONValue:
        """The worker's --json output, or None when it printed none (or not JSON, read by
        the one strict JSON reader: a key twice is not JSON either)."""
        try:
            return parse_json(self.stdout) if self.stdout.strip() else None
        except ValueError:  # JSONProblem is one
            return None

    def to_json(self) -> JSONObject:
        return {"gpu": self.gpu.to_json(), "exit_code": self.exit_code,
                "seconds": round(self.seconds, 3),
                "error": self.error.one_line() if self.error is not None else None,
                "output": self.output_json()}


@dataclass(frozen=True)
class FleetResult:
    """Every worker's outcome, in device order, and the wall time of the whole run."""

    command: str
    workers: tuple[WorkerOutcome, ...]
    seconds: float

    @property
    def exit_code(self) -> int:
        return worst_exit([w.exit_code for w in self.workers])

    def common_error(self) -> WorkerError | None:
        """The one error every worker failed with alike (bad input they all saw), if any."""
        errors = {w.error for w in self.workers}
        if len(self.workers) > 1 and len(errors) == 1 and not any(w.ok for w in self.workers):
            return next(iter(errors))
        return None

    def to_json(self) -> JSONObject:
        return {"command": self.command, "exit_code": self.exit_code,
                "wall_s": round(self.seconds, 3),
                "workers": [w.to_json() for w in self.workers]}


def gpu_of(environment: Doc) -> tuple[str, str]:
    """(name, uuid) of a certificate's GPU; an absent UUID reads as ''."""
    gpu: Doc = as_opt_doc(environment, "gpu") or {}
    return str(gpu.get("name", "")), str(gpu.get("uuid", "") or "")
