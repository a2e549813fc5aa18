"""The certificate mutation fuzz (issue 28): a recorded certificate of each kind with one
field replaced (wrong types, huge or negative numbers, NaN-like strings, empty containers,
very long strings) or deleted, resealed so the digest does not stop it, then driven through
`gate`, `show`, `diff` (against the original) and `report` in-process. Each answer must be
a verdict (exit 0 or 1) or exit 2 with exactly one line on stderr.

tests/cert/test_mutation_fuzz.py runs a few per kind; benchmarks/mutation_fuzz.py runs thousands.
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from _fuzzing import field_paths, unclean
from _recorded import recorded
from click.testing import CliRunner

from graphcert.cert.document import compute_digest
from graphcert.cli import cli

KINDS = ("topology", "bench", "sweep", "plan")
COMMANDS = ("gate", "show", "diff", "report")
DELETE = object()  # the mutant that removes the field
MUTANTS: tuple[tuple[str, Any], ...] = (
    ("delete", DELETE), ("{}", {}), ("[]", []), ("null", None), ("true", True),
    ("false", False), ("0", 0), ("-1", -1), ("1", 1), ("1.5", 1.5), ("-0.5", -0.5),
    ("10**400", 10**400), ("-10**400", -(10**400)), ("2**63", 2**63), ("1e308", 1e308),
    ("-1e308", -1e308), ("5e-324", 5e-324), ('"NaN"', "NaN"), ('"inf"', "inf"),
    ('"-Infinity"', "-Infinity"), ('""', ""), ('"x"', "x"), ("long string", "x" * 100_000),
    ("[null]", [None]), ('["x"]', ["x"]), ('{"x": 1}', {"x": 1}), ("[{}]", [{}]),
)
POLICY = 'method_change = "warn"\n'  # the fleet fixtures' method is older than this checkout


@dataclass(frozen=True)
class Mutation:
    """One field of one recorded certificate replaced (or deleted)."""

    kind: str
    base: str
    path: tuple[Any, ...]
    mutant: str

    def __str__(self) -> str:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path)
        return f"{self.base}{where} = {self.mutant}"


@dataclass
class Tally:
    """What a batch of mutations got: exit codes per command, crashes, mutations tried."""

    tried: int = 0
    codes: Counter[tuple[str, int]] = field(default_factory=Counter)
    crashes: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.tried += other.tried
        self.codes.update(other.codes)
        self.crashes += other.crashes


@cache
def _bases(kind: str) -> tuple[tuple[str, dict[str, Any], tuple[tuple[Any, ...], ...]], ...]:
    """Each recorded certificate of `kind` with the paths a mutation may change (all but the
    document itself and its digest, which resealing rewrites)."""
    return tuple((name, doc, tuple(p for p in field_paths(doc) if p and p != ("digest",)))
                 for name, doc in recorded(kind))


def mutations(kind: str, count: int, seed: int) -> Iterator[Mutation]:
    """`count` seeded mutations of the recorded certificates of `kind`."""
    rng = random.Random(f"{seed}:{kind}")
    bases = _bases(kind)
    for _ in range(count):
        name, _, paths = rng.choice(bases)
        yield Mutation(kind, name, rng.choice(paths), rng.choice(MUTANTS)[0])


def set_at(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    """Put a copy of `value` at `path` in `doc` (keys and list indices), or remove what is
    there when `value` is DELETE."""
    parent: Any = doc
    for part in path[:-1]:
        parent = parent[part]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(value)


def apply(m: Mutation) -> tuple[dict[str, Any], dict[str, Any]]:
    """(original, mutated and resealed) certificates for `m`."""
    original = next(doc for name, doc, _ in _bases(m.kind) if name == m.base)
    doc = copy.deepcopy(original)
    set_at(doc, m.path, dict(MUTANTS)[m.mutant])
    doc["digest"] = compute_digest(doc)
    return original, doc


def drive(m: Mutation, folder: Path) -> Tally:
    """Run the four readers on mutation `m` in `folder` (a fresh folder per call)."""
    original, doc = apply(m)
    certs = folder / "certs"
    certs.mkdir(parents=True)
    (folder / "original.json").write_text(json.dumps(original))
    (certs / "c.json").write_text(json.dumps(doc))
    (folder / "gate.toml").write_text(POLICY)
    policy = ["--policy", str(folder / "gate.toml")]
    runs = {"gate": ["gate", str(certs), *policy],
            "show": ["show", str(certs / "c.json")],
            "diff": ["diff", str(folder / "original.json"), str(certs / "c.json")],
            "report": ["report", str(certs), "-o", str(folder / "r.html"), *policy]}
    tally = Tally(tried=1)
    for command in COMMANDS:
        result = CliRunner().invoke(cli, runs[command])
        tally.codes[(command, result.exit_code)] += 1
        problem = unclean(result, one_line=True)
        if problem is not None:
            tally.crashes.append(f"{m}: {command}: {problem}")
    return tally


def run(kind: str, count: int, seed: int, folder: Path, start: int = 0) -> Tally:
    """`count` mutations of `kind` (from the `start`-th of the seeded sequence)."""
    tally = Tally()
    for i, m in enumerate(mutations(kind, start + count, seed)):
        if i >= start:
            tally.add(drive(m, folder / f"m{i}"))
    return tally


def exit_summary(tally: Tally, commands: Sequence[str] = COMMANDS) -> str:
    """'gate 0:3 1:1 2:6, show ...': exit codes per command."""
    parts = []
    for command in commands:
        codes = sorted((code, n) for (c, code), n in tally.codes.items() if c == command)
        parts.append(f"{command} " + " ".join(f"{code}:{n}" for code, n in codes))
    return ", ".join(parts)
