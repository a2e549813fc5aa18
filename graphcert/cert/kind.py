"""What a certificate kind declares about itself, once, in its folder
(`graphcert/kinds/<kind>/__init__.py`), and what every kind's typed result offers. Pure.

A declaration names its parts (the modules of its folder beside `result`); the layer that
uses a part loads it by name when it first needs it (graphcert.cert.registry), as pytest
loads its plugins, so the gate never imports a view and `--help` imports no kind at all.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import ClassVar, Protocol, cast

from graphcert.cert.results.verdict import Verdict

# The modules a kind's folder may hold beside result.py, each loaded by the layer that uses
# it: evidence (cert: the figures recomputed), compare (cert: against a baseline), rules
# (gate), views (render: terminal), html (render: the report page).
PARTS = frozenset({"evidence", "compare", "rules", "views", "html"})


class KindResult(Protocol):
    """What every kind's typed result offers the certificate, the store and the gate."""

    kind: ClassVar[str]  # the certificate kind this result is written as

    @property
    def verdict(self) -> Verdict:
        """The verdict the result records."""
        ...

    @property
    def framework(self) -> str | None:
        """The framework of a framework step's result; None for anything else."""
        ...

    def to_json(self) -> Mapping[str, object]:
        """The certificate's `results` block."""
        ...

    def rejudged(self) -> Verdict:
        """The verdict these results earn now (the store keeps the stricter one)."""
        ...


class ResultType(Protocol):
    """A kind's result class: reads the certificate's results and the verdict it records."""

    def from_json(self, results: Mapping[str, object],
                  verdict: Mapping[str, object]) -> KindResult: ...


@dataclass(frozen=True)
class KindSpec:
    """One certificate kind, declared once.

    `name` is the certificate's `kind`; `producer` the command that writes one (for "re-run"
    hints); `result` the class name in the kind's result.py; `parts` the other modules its
    folder holds; `steps`: a framework step's certificate of this kind carries graphcert's
    framework-step code in its method digest ("<kind>+step")."""

    name: str
    producer: str
    result: str
    parts: frozenset[str] = frozenset()
    steps: bool = False

    def __post_init__(self) -> None:
        unknown = self.parts - PARTS
        if unknown:
            raise ValueError(f"kind {self.name!r}: unknown parts {sorted(unknown)}")

    @property
    def package(self) -> str:
        """The kind's folder as a package name."""
        return f"graphcert.kinds.{self.name}"

    def has(self, part: str) -> bool:
        """Whether the kind's folder holds `part`."""
        return part in self.parts

    def module(self, part: str) -> ModuleType:
        """The kind's module `part` (result, or one of its declared parts), imported once."""
        if part != "result" and part not in self.parts:
            raise LookupError(f"kind {self.name!r} has no {part} module")
        return importlib.import_module(f"{self.package}.{part}")

    def result_type(self) -> ResultType:
        """The kind's typed result class."""
        return cast(ResultType, getattr(self.module("result"), self.result))

    def schema_path(self) -> Path:
        """The kind's JSON Schema, as shipped in its folder (schema.json; the package is a
        plain folder, as graphcert's kernels are)."""
        return Path(str(resources.files(self.package).joinpath("schema.json")))
