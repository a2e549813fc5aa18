"""SYNTHETIC injection-collector streams (docs/record-streams.md), written by tests: nothing
here was recorded on a GPU. Real streams recorded by the collector go under
tests/fixtures/streams/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

T0 = 1_000_000_000  # the synthetic process line's CUPTI `at`


def kernel_node(name: str = "synthetic_k", **over: Any) -> dict[str, Any]:
    """A synthetic kernel node of a collector snapshot (`over` replaces its fields)."""
    node: dict[str, Any] = {"type": 0, "name": name, "grid": [4, 1, 1], "block": [256, 1, 1],
                            "smem": 0, "param_sizes": [8, 4], "cooperative": 0,
                            "cluster": [0, 0, 0], "priority": 0,
                            "params": ["0000001000700000", "00040000"],
                            "pointers": [[0, 0, 4096]]}
    node.update(over)
    return node


def chain(names: list[str]) -> dict[str, Any]:
    """A synthetic snapshot: kernels in a chain."""
    return {"nodes": [kernel_node(n) for n in names],
            "edges": [[i, i + 1, 0, 0, 0] for i in range(len(names) - 1)]}


class SyntheticStream:
    """One synthetic process's stream, line by line; `write` puts it in a run folder."""

    def __init__(self, pid: int = 4242, ppid: int = 1, argv: tuple[str, ...] = ("synthetic",),
                 wall_ns: int = 1_700_000_000_000_000_000, start: int = 777,
                 head: bool = True) -> None:
        self.pid, self.start = pid, start
        self.lines: list[str] = []
        self.strings: dict[str, int] = {}
        if head:
            self.add("process", pid=pid, ppid=ppid, argv=list(argv), exe="/synthetic/bin",
                     wall_ns=wall_ns, at=T0, cupti_version=130000, collector="synthetic0")

    def add(self, t: str, **fields: Any) -> SyntheticStream:
        self.lines.append(json.dumps({"t": t, **fields}))
        return self

    def raw(self, text: str) -> SyntheticStream:
        """A line as given (unreadable ones, for the tests that count them)."""
        self.lines.append(text)
        return self

    def string(self, s: str) -> int:
        if s not in self.strings:
            self.strings[s] = len(self.strings) + 1
            self.add("str", id=self.strings[s], s=s)
        return self.strings[s]

    def device(self, ordinal: int = 0) -> SyntheticStream:
        return self.add("device", ordinal=ordinal, uuid=f"GPU-synthetic-{ordinal}",
                        name="Synthetic GPU")

    def inst(self, exec_: int, graph: int, exec_id: int | None, at: int,
             snapshot: dict[str, Any] | None = None, dur: int = 50,
             read_error: str | None = None) -> SyntheticStream:
        return self.add("inst", exec=exec_, graph=graph, exec_id=exec_id,
                        graph_id=None if exec_id is None else exec_id + 1000,
                        t0=T0 + at, t1=T0 + at + dur,
                        snapshot=snapshot if snapshot is not None or read_error
                        else chain(["synthetic_a", "synthetic_b"]),
                        read_error=read_error)

    def kernel(self, name: str, start: int, end: int, graph_id: int = 0,
               corr: int = 0) -> SyntheticStream:
        return self.add("kernel", name=self.string(name), start=start, end=end,
                        graph_id=graph_id, corr=corr, device=0)

    def glaunch(self, exec_id: int, corr: int, start: int, end: int) -> SyntheticStream:
        return self.add("glaunch", graph_id=exec_id, corr=corr, start=start, end=end, device=0)

    def end(self, how: str = "exit", code: int | None = None) -> SyntheticStream:
        return self.add("end", how=how, code=code, at=T0 + 10**9)

    def write(self, folder: Path, torn: str | None = None) -> Path:
        """The stream as proc-<pid>-<start>.jsonl in `folder`; `torn`: a last line written
        without its newline."""
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"proc-{self.pid}-{self.start}.jsonl"
        text = "".join(line + "\n" for line in self.lines) + (torn or "")
        path.write_text(text, encoding="utf-8")
        return path
