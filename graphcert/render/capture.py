"""The view of a capture: one row per class with what capturing it cost. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from graphcert.cert.results.capture import CaptureResult
from graphcert.model.jsontext import short_hash
from graphcert.render.layout import Column, Grid
from graphcert.render.numbers import size


def capture_table(ref: str, mode: str, rows: Sequence[CaptureResult]) -> Grid:
    """Per class: nodes, capture / instantiate / upload time, memory, topology hash."""
    columns = [Column(col, right=col != "topology", key=col == "class")
               for col in ("class", "n", "nodes", "capture", "instantiate", "upload",
                           "device memory", "graph mem reserved", "topology")]
    cells = []
    for r in rows:
        reserved = r.graph_memory.get("reserved_current")  # absent: the driver did not say
        cells.append((size(r.capacity), size(r.n), str(r.nodes),
                      f"{r.capture_s * 1e3:.2f} ms", f"{r.instantiate_s * 1e3:.2f} ms",
                      f"{r.upload_s * 1e3:.2f} ms", f"{r.free_delta_bytes / 2**20:.1f} MiB",
                      f"{reserved / 2**20:.1f} MiB" if reserved is not None else "n/a",
                      short_hash(r.snapshot.topology_hash)))
    return Grid(columns, cells, title=f"capture {ref} ({mode} mode)")


def capture_summary(rows: Sequence[CaptureResult], out_dir: str) -> str:
    """vLLM's one line: how long capturing took and how much memory, where the files are."""
    total = sum(r.capture_s + r.instantiate_s for r in rows)
    mem = sum(r.free_delta_bytes for r in rows)
    return (f"capturing {len(rows)} class(es) took {total:.3f} s and {mem / 2**30:.3f} GiB; "
            f"files in {out_dir}/")
