"""Finding workloads by reference, and the digest of their sources. Pure and import-light.

A reference is a built-in name (`scan`), `path/to/file.py:NAME` or `package.module:NAME`,
optionally with constructor options in brackets: `chain[kernels=1000]`.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphcert.errors import InputError
from graphcert.paths import kernels_dir


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

_REF = re.compile(r"^(?P<target>[^\[\]]+?)(?:\[(?P<opts>[^\]]*)\])?$")


@dataclass(frozen=True)
class WorkloadRef:
    """A parsed reference: the target and its constructor options."""

    text: str
    target: str
    options: tuple[tuple[str, Any], ...]

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
    options: list[tuple[str, Any]] = []
    for item in filter(None, (match.group("opts") or "").split(",")):
        key, sep, raw = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise InputError(f"workload option {item!r} in {text!r} is not key=value")
        options.append((key.strip(), _parse_value(raw.strip())))
    return WorkloadRef(text.strip(), match.group("target").strip(), tuple(options))


def _parse_value(raw: str) -> Any:
    for convert in (int, float):
        try:
            return convert(raw)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(raw.lower(), raw)


def load(text: str) -> Any:
    """Instantiate the workload a reference names; every failure is one clear line."""
    ref = parse_ref(text)
    if ref.is_builtin:
        spec = BUILTINS[ref.target]
        obj = getattr(importlib.import_module(spec.module), spec.attr)
        origin = spec.module
    elif ":" in ref.target:
        obj, origin = _load_user_object(ref.target)
    else:
        close = difflib.get_close_matches(ref.target, list(BUILTINS), n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(close)}?" if close else (
            f"built-ins are {', '.join(BUILTINS)}; a user workload is path/file.py:NAME")
        raise InputError(f"unknown workload {ref.target!r}", hint=hint)
    try:
        workload = obj(**dict(ref.options)) if isinstance(obj, type) else obj
        if ref.options and not isinstance(obj, type):
            raise InputError(f"{origin}: {ref.target} is an instance; it takes no options")
    except InputError:
        raise
    except TypeError as exc:
        raise InputError(f"{origin}: cannot construct {ref.target} with "
                         f"{dict(ref.options)}: {exc}") from exc
    except Exception as exc:  # user code: report, never a traceback
        raise InputError(f"{origin}: constructing {ref.target} raised "
                         f"{type(exc).__name__}: {exc}") from exc
    if getattr(workload, "is_step", False) is True:  # graphcert.step(...): its own checks
        return workload
    _check_interface(workload, origin)
    return workload


_REQUIRED = ("name", "description", "kernel_files", "setup", "record", "outputs", "reference",
             "teardown")


def _check_interface(workload: Any, origin: str) -> None:
    missing = [a for a in _REQUIRED if not hasattr(workload, a)]
    if missing:
        raise InputError(f"{origin}: the object does not implement the Workload interface: "
                         f"missing {', '.join(missing)}",
                         hint="see graphcert/workloads/base.py or examples/")


def _load_user_object(target: str) -> tuple[Any, str]:
    location, _, attr = target.rpartition(":")
    if not attr.isidentifier():
        raise InputError(f"workload reference {target!r} names no object after ':'")
    if location.endswith(".py") or "/" in location or "\\" in location:
        path = Path(location).expanduser()
        if not path.is_file():
            raise InputError(f"workload file {location} does not exist",
                             hint="give a path to a .py file, relative to the current folder")
        module = _import_file(path)
        origin = str(path)
    else:
        try:
            module = importlib.import_module(location)
        except ModuleNotFoundError as exc:
            raise InputError(f"workload module {location!r} cannot be imported: {exc}") from exc
        except Exception as exc:
            raise InputError(f"importing workload module {location!r} raised "
                             f"{type(exc).__name__}: {exc}") from exc
        origin = location
    if not hasattr(module, attr):
        raise InputError(f"{origin} has no object named {attr!r}")
    return getattr(module, attr), origin


def _import_file(path: Path) -> Any:
    name = "graphcert_user_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"workload file {path} cannot be loaded as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise InputError(f"importing workload file {path} raised "
                         f"{type(exc).__name__}: {exc}") from exc
    return module


def source_files(text: str) -> list[Path] | None:
    """The files a workload's digest covers (Python definition + kernels), without importing
    it. None when the source cannot be found (a user module no longer on the path)."""
    ref = parse_ref(text)
    if ref.is_builtin:
        spec = BUILTINS[ref.target]
        found = importlib.util.find_spec(spec.module)
        if found is None or found.origin is None:
            return None
        kdir = kernels_dir()
        return [Path(found.origin)] + [kdir / k for k in spec.kernel_files]
    location = ref.target.rpartition(":")[0]
    if location.endswith(".py") or "/" in location:
        path = Path(location).expanduser()
        return [path] if path.is_file() else None
    try:
        found = importlib.util.find_spec(location)
    except (ImportError, ValueError):
        return None
    return [Path(found.origin)] if found and found.origin else None


def digest_files(paths: list[Path]) -> str:
    """sha256 over (file name, contents) of each file, in the order given."""
    h = hashlib.sha256()
    for path in paths:
        h.update(path.name.encode() + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def source_digest(text: str) -> str | None:
    """Digest of a workload's sources, or None when they cannot be found."""
    files = source_files(text)
    if files is None or not all(p.is_file() for p in files):
        return None
    return digest_files(files)
