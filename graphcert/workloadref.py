"""Workload references and the digest of a workload's sources, without importing any
workload. Pure and light: no numpy, no CUDA, nothing of graphcert.workloads or
graphcert.frameworks, so the commands that read certificates (gate, report, show) check
staleness at the cost of reading and hashing the sources only.

A reference is a built-in name (`scan`), `path/to/file.py:NAME` or `package.module:NAME`,
optionally with constructor options in brackets: `chain[kernels=1000]`. The table of
built-ins (BUILTINS) says where each one's class is, as a module name, so its sources are
found without importing it; graphcert.workloads.registry loads them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from graphcert.cert import digests
from graphcert.errors import InputError
from graphcert.paths import cache_dir, kernels_dir


@dataclass(frozen=True)
class BuiltinSpec:
    """A built-in workload: where its class lives and which kernels it compiles."""

    name: str
    module: str
    attr: str
    description: str
    kernel_files: tuple[str, ...]


BUILTINS: dict[str, BuiltinSpec] = {
    s.name: s
    for s in (
        BuiltinSpec("scan", "graphcert.workloads.scan", "Scan",
                    "exclusive prefix sum over u32, recursive multi-block (block 256)",
                    ("scan.cu",)),
        BuiltinSpec("join", "graphcert.workloads.join", "Join",
                    "inner hash join of u32 keys (arity 1 or 2): build, probe, scan, scatter",
                    ("join.cu", "scan.cu")),
        BuiltinSpec("fixpoint", "graphcert.workloads.fixpoint", "Fixpoint",
                    "label propagation for connected components, K iterations as K launches",
                    ("fixpoint.cu",)),
        BuiltinSpec("decode", "graphcert.workloads.decode", "Decode",
                    "one decoder step: L layers of norm, matvec, bias, activation, residual",
                    ("decode.cu",)),
        BuiltinSpec("resident", "graphcert.workloads.resident", "Resident",
                    "parameter upload, memset clear, kernel, readback (memcpy + memset nodes)",
                    ("resident.cu",)),
        BuiltinSpec("chain", "graphcert.workloads.chain", "Chain",
                    "N empty kernels: pure launch overhead", ("chain.cu",)),
        BuiltinSpec("converge", "graphcert.workloads.converge", "Converge",
                    "label propagation until convergence in a conditional WHILE node",
                    ("fixpoint.cu",)),
    )
}

# A constructor option as `name[key=value]` gives it: a number, a boolean or text.
OptionValue = int | float | bool | str

_REF = re.compile(r"^(?P<target>[^\[\]]+?)(?:\[(?P<opts>[^\]]*)\])?$")


@dataclass(frozen=True)
class WorkloadRef:
    """A parsed reference: the target and its constructor options."""

    text: str
    target: str
    options: tuple[tuple[str, OptionValue], ...]

    @property
    def is_builtin(self) -> bool:
        return self.target in BUILTINS


def parse_ref(text: str) -> WorkloadRef:
    """Parse `name`, `file.py:NAME`, `pkg.mod:NAME`, each optionally with `[k=v,...]`."""
    match = _REF.match(text.strip())
    if not match:
        raise InputError(f"workload reference {text!r} is malformed",
                         hint="write NAME, path/file.py:NAME or package.module:NAME, "
                              "options as NAME[key=value,...]")
    options: list[tuple[str, OptionValue]] = []
    for item in filter(None, (match.group("opts") or "").split(",")):
        key, sep, raw = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise InputError(f"workload option {item!r} in {text!r} is not key=value")
        if any(k == key.strip() for k, _ in options):
            raise InputError(f"workload option {key.strip()!r} is given twice in {text!r}",
                             hint="give each option once")
        options.append((key.strip(), _parse_value(raw.strip())))
    return WorkloadRef(text.strip(), match.group("target").strip(), tuple(options))


def _parse_value(raw: str) -> OptionValue:
    # bounded lengths: a 5,000-digit literal is left as text (the type check rejects it)
    # rather than converted
    if re.fullmatch(r"[+-]?[0-9][0-9_]{0,40}", raw):
        try:
            return int(raw)  # 1_000 as Python writes it
        except ValueError:
            return raw
    if re.fullmatch(r"[+-]?([0-9]{1,30}(\.[0-9]{0,30})?|\.[0-9]{1,30})([eE][+-]?[0-9]{1,3})?",
                    raw):
        value = float(raw)
        if math.isfinite(value):
            return value
    return {"true": True, "false": False}.get(raw.lower(), raw)


def _location(ref: WorkloadRef, package_dir: Path | None
              ) -> tuple[Path, Path, Path, tuple[str, ...]] | None:
    """(module file, search root, local folder, declared kernel names) without importing."""
    if ref.is_builtin:
        spec = BUILTINS[ref.target]
        found = digests.module_location(spec.module, package_dir=package_dir)
        return None if found is None else (*found, spec.kernel_files)
    location = ref.target.rpartition(":")[0]
    if location.endswith(".py") or "/" in location or "\\" in location:
        try:
            path = Path(location).expanduser()
        except RuntimeError:  # ~user/... of no such user: not found, like any missing file
            return None
        if not path.is_file():
            return None
        folder = path.resolve().parent
        return path.resolve(), folder, folder, ()
    found = digests.module_location(location)
    return None if found is None else (*found, ())


def source_files(text: str, *, package_dir: Path | None = None,
                 kernel_dir: Path | None = None) -> list[tuple[str, Path]] | None:
    """(label, path) of every file a workload's digest covers, without importing it: its
    module and local imports, its kernels and their headers. None when not found."""
    where = _location(parse_ref(text), package_dir)
    if where is None:
        return None
    module_file, search_root, local_dir, kernels = where
    # the modules' parses kept beside the kernel cache: a gate need not parse every module
    # of every workload again in every process (about 20 ms over reports/)
    return digests.workload_files(module_file, search_root, local_dir, kernels,
                                  kernel_dir or kernels_dir(),
                                  store=cache_dir() / "imports")


def source_digest(text: str, *, package_dir: Path | None = None,
                  kernel_dir: Path | None = None) -> str | None:
    """Digest of a workload's sources and options, or None when they cannot be found."""
    files = source_files(text, package_dir=package_dir, kernel_dir=kernel_dir)
    if files is None:
        return None
    try:
        return digests.digest_labelled(files, dict(parse_ref(text).options))
    except OSError:
        return None


def method_digest(kind: str, *, package_dir: Path | None = None,
                  kernel_dir: Path | None = None) -> str:
    """Digest of graphcert's own method for certificates of `kind`."""
    return digests.method_digest(kind, package_dir=package_dir, kernel_dir=kernel_dir)
