"""An op log: while recording, every launch or async copy graphcert's own wrappers enqueue
is noted as a replay closure with its arguments already packed.

bench uses it for the stream path: record() runs once under the log, and each timed
iteration replays the closures, so Python argument packing stays out of the stream figures.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # stream.py imports this module (through memory.py)
    from graphcert.cuda.stream import Stream

Op = Callable[["Stream"], None]  # takes the stream
_local = threading.local()


@contextmanager
def recording() -> Iterator[list[Op]]:
    ops: list[Op] = []
    previous = getattr(_local, "ops", None)
    _local.ops = ops
    try:
        yield ops
    finally:
        _local.ops = previous


def note(op: Op) -> None:
    ops = getattr(_local, "ops", None)
    if ops is not None:
        ops.append(op)


def run(op: Op, stream: Stream) -> None:
    """Enqueue `op` on `stream` now and note it; a replay calls `op` itself, so the timed
    loop pays for the enqueue alone, not for the log."""
    op(stream)
    note(op)
