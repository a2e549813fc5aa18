"""Loading workloads by reference. Parsing a reference, the table of built-ins and the digest
of a workload's sources live in graphcert.workloadref (light: the commands that only read
certificates use it without importing any workload); they are re-exported here, where
loading code has always found them.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import cast

from graphcert.errors import InputError
from graphcert.frameworks.step import Step
from graphcert.model.jsontext import short_hash
from graphcert.workloadref import (
    BUILTINS,
    BuiltinSpec,
    OptionValue,
    WorkloadRef,
    method_digest,
    parse_ref,
    source_digest,
    source_files,
)
from graphcert.workloads.base import Workload
from graphcert.workloads.loaded import LoadedWorkload, NativeWorkload, hooks_of

__all__ = ["BUILTINS", "BuiltinSpec", "OptionValue", "WorkloadRef", "load", "method_digest",
           "parse_ref", "source_digest", "source_files"]


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
