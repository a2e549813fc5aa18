"""Finding workloads by reference, and the digest of their sources. Pure and import-light.

A reference is a built-in name (`scan`), `path/to/file.py:NAME` or `package.module:NAME`,
optionally with constructor options in brackets: `chain[kernels=1000]`.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import inspect
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import cast

from graphcert.cert import digests
from graphcert.errors import InputError
from graphcert.frameworks.step import Step
from graphcert.model.jsontext import short_hash
from graphcert.paths import kernels_dir
from graphcert.workloads.base import Workload
from graphcert.workloads.loaded import LoadedWorkload, NativeWorkload, hooks_of


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


_KINDS: dict[str, tuple[type, ...]] = {"int": (int,), "float": (int, float), "bool": (bool,),
                                       "str": (str,)}


def _check_option_types(obj: type, options: dict[str, OptionValue], origin: str) -> None:
    """An option annotated int/float/bool/str must have that type: `kernels=1.5` for an int
    is an error, never a silent truncation."""
    try:
        params = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return
    for key, value in options.items():
        param = params.get(key)
        if param is None:
            continue
        note = param.annotation
        name = note if isinstance(note, str) else getattr(note, "__name__", "")
        wanted = _KINDS.get(name)
        if wanted is None:
            continue
        ok = isinstance(value, wanted) and (name == "bool" or not isinstance(value, bool))
        if not ok:
            raise InputError(f"{origin}: option {key}={value!r} must be {_A[name]} {name}",
                             hint=f"write {key}=<{name}> in the brackets")


_A = {"int": "an", "float": "a", "bool": "a", "str": "a"}


def load(text: str) -> LoadedWorkload:
    """Load the workload a reference names, normalised once: a built-in or user workload with
    its hooks resolved, or a framework step. Every failure is one clear line."""
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
    if isinstance(obj, type):
        _check_option_types(obj, dict(ref.options), origin)
    try:
        made: object = obj(**dict(ref.options)) if isinstance(obj, type) else obj
        if ref.options and not isinstance(obj, type):
            raise InputError(f"{origin}: {ref.target} is an instance; it takes no options")
    except InputError:
        raise
    except TypeError as exc:
        raise InputError(f"{origin}: cannot construct {ref.target} with "
                         f"{dict(ref.options)}: {exc}") from exc
    except (Exception, SystemExit) as exc:  # user code: report, never a traceback
        raise InputError(f"{origin}: constructing {ref.target} raised "
                         f"{type(exc).__name__}: {exc}") from exc
    if isinstance(made, Step):  # graphcert.step(...): its own checks
        return LoadedWorkload(text, origin, made)
    workload = _check_interface(made, origin)
    try:
        hooks = hooks_of(workload)
    except Exception as exc:  # user code (a hook property): report, never a traceback
        raise InputError(f"{origin}: reading the optional hooks of {ref.target} raised "
                         f"{type(exc).__name__}: {exc}") from exc
    return LoadedWorkload(text, origin, NativeWorkload(workload, hooks))


_REQUIRED = ("name", "description", "kernel_files", "setup", "record", "outputs", "reference",
             "teardown")


def _check_interface(obj: object, origin: str) -> Workload:
    """`obj` as a Workload, or one line naming what it lacks."""
    missing = [a for a in _REQUIRED if not hasattr(obj, a)]
    if missing:
        raise InputError(f"{origin}: the object does not implement the Workload interface: "
                         f"missing {', '.join(missing)}",
                         hint="see graphcert/workloads/base.py or examples/")
    return cast(Workload, obj)  # every member of the protocol is there (checked just above)


def _load_user_object(target: str) -> tuple[object, str]:
    location, _, attr = target.rpartition(":")
    if not attr.isidentifier():
        raise InputError(f"workload reference {target!r} names no object after ':'")
    if location.endswith(".py") or "/" in location or "\\" in location:
        try:
            path = Path(location).expanduser()
        except RuntimeError:  # ~user/... of no such user
            raise InputError(f"workload file {location}: its home folder is unknown") from None
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
        except (Exception, SystemExit) as exc:
            raise InputError(f"importing workload module {location!r} raised "
                             f"{type(exc).__name__}: {exc}") from exc
        origin = location
    if not hasattr(module, attr):
        raise InputError(f"{origin} has no object named {attr!r}")
    return getattr(module, attr), origin


def _import_file(path: Path) -> ModuleType:
    name = "graphcert_user_" + short_hash(hashlib.sha1(str(path.resolve()).encode()).hexdigest())
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"workload file {path} cannot be loaded as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = str(path.resolve().parent)
    if folder not in sys.path:  # its sibling modules import as they would for a script
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # a user's sys.exit(7) is an error, not exit 7
        del sys.modules[name]
        raise InputError(f"importing workload file {path} raised "
                         f"{type(exc).__name__}: {exc}") from exc
    return module


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
    return digests.workload_files(module_file, search_root, local_dir, kernels,
                                  kernel_dir or kernels_dir())


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
