"""What a certificate's result depends on, as digests the gate can recompute. Pure.

Two digests go into a certificate's workload block:
- `source_digest`: the workload's Python module and the local modules it imports (followed
  with `ast`, resolved relative to the file or its package), every kernel file it names and
  every header those include (`#include "..."`, followed recursively through the folders
  NVRTC searches), and the workload's options;
- `method_digest`: graphcert's own harness for that certificate kind (METHOD_FILES below).

Nothing here imports or runs the workload: the gate recomputes both on any machine.
Paths can be injected (`package_dir`, `kernel_dir`) so tests work on a copy of the tree.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from importlib import machinery
from pathlib import Path

from graphcert.cert.method import STEP_SUFFIX
from graphcert.cert.pyimports import parse_imports
from graphcert.fileread import MAX_SOURCE_BYTES, read_bounded
from graphcert.paths import kernels_dir

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # graphcert/

# graphcert's method per certificate kind: the one place that says which of graphcert's own
# files decide a result. ("pkg", p) is graphcert/<p>; ("kernels", k) is kernels/<k>, with
# the headers it includes. A test checks every entry exists. A framework step's certificate
# has method kind "<kind>+step" (graphcert.cert.method.method_kind): its kind's files plus
# "step" (and "step:<kind>"), the framework-step code no built-in workload's result uses.
METHOD_FILES: dict[str, tuple[tuple[str, str], ...]] = {
    "common": (("pkg", "run/jobs.py"), ("pkg", "run/session.py"), ("pkg", "outputs.py"),
               ("pkg", "cert/results/verdict.py"), ("kernels", "graphcert_runtime.cu"),
               # the optional hooks' defaults, resolved at load (tolerance, size parameters)
               ("pkg", "workloads/loaded.py"),
               # which procedure runs a loaded reference, and how a workload graphcert
               # records itself is verified, benched (its fresh context too) and profiled
               ("pkg", "run/runnable.py"), ("pkg", "run/native.py")),
    "topology": (("pkg", "run/verify.py"), ("pkg", "run/capture.py"),
                 ("pkg", "kinds/topology/result.py"), ("pkg", "cert/results/capture.py"),
                 ("pkg", "kinds/topology/steps.py"), ("pkg", "buckets.py"),
                 ("pkg", "model/canonical.py"), ("pkg", "model/twins.py"),
                 ("pkg", "model/kinds.py")),
    "bench": (("pkg", "run/bench.py"), ("pkg", "run/harness.py"),
              ("pkg", "run/benchsettings.py"), ("pkg", "placements.py"),
              ("pkg", "run/fresh.py"), ("pkg", "kinds/bench/result.py"),
              ("pkg", "cert/results/figures.py"), ("pkg", "cert/results/measure.py"),
              ("pkg", "stats.py"),
              # stats' median interval is defined there (one definition with profile's)
              ("pkg", "orderstats.py"),
              # a new primary context for each placement after the first (renew)
              ("pkg", "cuda/context.py"), ("pkg", "cuda/device.py")),
    "step": (("pkg", "frameworks/step.py"), ("pkg", "frameworks/adapters.py"),
             ("pkg", "frameworks/array_adapter.py"), ("pkg", "frameworks/torch_adapter.py"),
             ("pkg", "frameworks/cupy_adapter.py"), ("pkg", "frameworks/cuda_core_adapter.py"),
             ("pkg", "frameworks/compare.py"), ("pkg", "run/steps.py"),
             # how a step is verified, benched and profiled (its framework's context)
             ("pkg", "run/framework.py"),
             # pad values per input, and why a bucket fails (its causes' words)
             ("pkg", "frameworks/padding.py"), ("pkg", "run/step_causes.py"),
             ("pkg", "kinds/topology/causes.py"),
             # the moved-memory cause: the pointers read among kernel parameters, checked
             ("pkg", "cuda/params.py"), ("pkg", "cuda/handles.py"), ("pkg", "model/params.py")),
    "step:bench": (("pkg", "run/steps_bench.py"),),
}
# A sweep is bench runs plus the fit over them.
METHOD_FILES["sweep"] = (*METHOD_FILES["bench"], ("pkg", "kinds/sweep/result.py"))
# A plan is the planner's choice over a step's measured cost curve. A new kind's
# entry adds to its own digest only: each kind's digest covers "common" and its own files.
METHOD_FILES["plan"] = (
    *(("pkg", f"plan/{name}.py") for name in
      ("__init__", "costs", "engines", "evaluate", "optimise", "traffic")),
    ("pkg", "kinds/plan/result.py"), ("pkg", "run/plan.py"))
# A profile is CUPTI's records of a replayed graph joined to its nodes, its replays timed
# on bench's harness (the one device time of a replay).
METHOD_FILES["profile"] = (
    ("pkg", "run/profile.py"), ("pkg", "run/profile_trace.py"), ("pkg", "run/harness.py"),
    ("pkg", "run/profile_span.py"), ("pkg", "run/benchsettings.py"),
    ("pkg", "kinds/profile/result.py"), ("pkg", "kinds/profile/overhead.py"),
    ("pkg", "kinds/profile/span.py"), ("pkg", "orderstats.py"),
    ("pkg", "run/profile_whatif.py"), ("pkg", "kinds/profile/whatif.py"),
    *(("pkg", f"{d}/{p.name}") for d in ("profiling", "cupti")
      for p in sorted((PACKAGE_DIR / d).glob("*.py"))))
# A record is a program observed through CUPTI's callbacks and kernel records, in place or
# through the injection collector's streams (read and merged by recording/).
METHOD_FILES["record"] = (
    ("pkg", "cupti/callbacks.py"), ("pkg", "cupti/record.py"), ("pkg", "cupti/activity.py"),
    ("pkg", "run/record.py"), ("pkg", "recording/events.py"),
    ("pkg", "recording/analysis.py"), ("pkg", "recording/regions.py"),
    ("pkg", "recording/processes.py"), ("pkg", "recording/streams.py"),
    ("pkg", "recording/rawsnapshot.py"), ("pkg", "recording/streamfields.py"),
    ("pkg", "kinds/record/result.py"),
    ("pkg", "kinds/record/codec.py"), ("pkg", "run/record_command.py"),
    ("pkg", "run/record_run.py"),
    # the injection collector: what `record -- COMMAND` hears in every process
    *(("pkg", f"injection/{p.name}") for p in sorted((PACKAGE_DIR / "injection").iterdir())
      if p.suffix in (".c", ".h")), ("pkg", "injection/build.py"))


_INCLUDE = re.compile(rb'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def _read(path: Path) -> bytes:
    """A source file's bytes: a regular file only, size-capped (a certificate names the
    workload, so a FIFO or /dev/zero planted as its module must not hang the gate)."""
    return read_bounded(path, MAX_SOURCE_BYTES, streams=False)


def _module_file(base: Path, parts: Sequence[str]) -> list[Path]:
    """Files a dotted name under `base` loads: each package's __init__.py, then the module.
    (Joined and tested as strings: pathlib's objects were most of the cost of a lookup.)"""
    found: list[Path] = []
    here = str(base)
    for i, part in enumerate(parts):
        if not part.isidentifier():
            break
        here = os.path.join(here, part)
        init = os.path.join(here, "__init__.py")
        if os.path.isfile(init):
            found.append(Path(init))
        elif i == len(parts) - 1 or not os.path.isdir(here):
            module = here + ".py"
            if os.path.isfile(module):
                found.append(Path(module))
            break
    return found


def _imports(path: Path, search_root: Path,
             known: dict[tuple[Path, tuple[str, ...]], list[Path]] | None = None,
             store: Path | None = None) -> tuple[list[Path], list[str]]:
    """Local files `path` imports, and the string literals it holds (kernel names). `known`:
    the files of each (base, dotted name) looked up so far in this closure (modules of one
    workload import the same names; each lookup is a few stat calls)."""
    imports, literals = parse_imports(_read(path), str(path), store)
    memo = {} if known is None else known

    def module_file(base: Path, parts: list[str]) -> list[Path]:
        key = (base, tuple(parts))
        if key not in memo:
            memo[key] = _module_file(base, parts)
        return memo[key]

    files: list[Path] = []
    package = path.parent
    for level, module, names in imports:
        if module is None and level == 0:  # import a.b.c
            for name in names:
                files += module_file(search_root, name.split("."))
            continue
        base = search_root
        if level:
            base = package
            for _ in range(level - 1):
                base = base.parent
        parts = module.split(".") if module else []
        files += module_file(base, parts) if parts else []
        for name in names:
            files += module_file(base, [*parts, name])
    return files, list(literals)


def python_closure(entry: Path, search_root: Path, local_dir: Path, *,
                   store: Path | None = None) -> tuple[list[Path], list[str]]:
    """`entry` and every module under `local_dir` it imports, transitively (sorted after
    the entry), plus the kernel-like string literals they hold. `store`: a folder where the
    modules' parses are kept between processes (None: kept in this process only)."""
    first = entry.resolve()
    local = local_dir.resolve()  # once: resolving is a system call per path component
    seen: dict[Path, None] = {first: None}
    queue = [entry]
    literals: list[str] = []
    # within one closure each file found is looked up and resolved once, however many of
    # its modules import it
    known: dict[tuple[Path, tuple[str, ...]], list[Path]] = {}
    resolved: dict[Path, tuple[Path, bool]] = {}  # file -> (resolved, under local_dir)
    while queue:
        current = queue.pop()
        found, names = _imports(current, search_root, known, store)
        literals += names
        for f in found:
            if f not in resolved:
                real = f.resolve()
                resolved[f] = real, real.is_relative_to(local)
            key, is_local = resolved[f]
            if is_local and key not in seen:
                seen[key] = None
                queue.append(f)
    ordered = [first] + sorted(p for p in seen if p != first)
    return ordered, sorted(set(literals))


def include_closure(sources: Iterable[Path], include_dirs: Sequence[Path]) -> list[Path]:
    """The kernel files and every header they include with `#include "..."` (recursively),
    each resolved beside the including file, then in `include_dirs` (as NVRTC's -I)."""
    seen: dict[Path, None] = {}
    queue = [p.resolve() for p in sources]
    while queue:
        current = queue.pop()
        if current in seen:
            continue
        seen[current] = None
        for name in _INCLUDE.findall(_read(current)):
            text = name.decode("utf-8", "replace")
            for folder in (current.parent, *include_dirs):
                candidate = folder / text
                if candidate.is_file():
                    queue.append(candidate.resolve())
                    break
    return sorted(seen)


def digest_labelled(files: Sequence[tuple[str, Path]], extra: object = None) -> str:
    """sha256 over (label, contents) of each file in order, then the canonical JSON of
    `extra` (the workload's options)."""
    h = hashlib.sha256()
    for label, path in files:
        h.update(label.encode("utf-8") + b"\0")
        h.update(_read(path))
        h.update(b"\0")
    if extra is not None:  # not canonical_json: this text is in every recorded source digest
        h.update(b"options\0" + json.dumps(extra, sort_keys=True, default=repr).encode())
    return h.hexdigest()


def _labels(paths: Sequence[Path], roots: Sequence[tuple[str, Path]],
            resolved: Sequence[Path] | None = None) -> list[str]:
    """Each path as `prefix/relative/path` under the first root holding it (resolved, as
    the roots are: once for all paths), else its bare name. `resolved`: the paths resolved
    already, where the caller has them (resolving is a system call per path component)."""
    resolved_roots = [(prefix, root.resolve()) for prefix, root in roots]
    labels: list[str] = []
    for path, real in zip(paths, resolved or [p.resolve() for p in paths], strict=True):
        labels.append(next((f"{prefix}/{real.relative_to(root).as_posix()}"
                            for prefix, root in resolved_roots if real.is_relative_to(root)),
                           path.name))
    return labels


def workload_files(module_file: Path, search_root: Path, local_dir: Path,
                   kernel_names: Sequence[str], kernel_dir: Path, *,
                   store: Path | None = None) -> list[tuple[str, Path]] | None:
    """(label, path) of everything a workload's source digest covers; None when missing.
    `store`: as for python_closure."""
    if not module_file.is_file():
        return None
    python, literals = python_closure(module_file, search_root, local_dir, store=store)
    kernels: list[Path] = []
    for name in [*kernel_names, *literals]:
        for folder in (local_dir, kernel_dir):
            candidate = folder / name
            if candidate.is_file():
                kernels.append(candidate)
                break
        else:
            if name in kernel_names:  # a kernel the workload declares is gone
                return None
    headers = include_closure(kernels, [kernel_dir])
    files = python + headers  # both closures give resolved paths
    return list(zip(_labels(files, [("kernels", kernel_dir), ("src", local_dir)], files),
                    files, strict=True))


def method_files(kind: str, *, package_dir: Path | None = None,
                 kernel_dir: Path | None = None) -> list[tuple[str, Path]]:
    """(label, path) of graphcert's own files that decide a certificate of method kind `kind`
    ("topology", "bench", "sweep", "plan"; "topology+step" or "bench+step" for a framework step)."""
    pkg = package_dir or PACKAGE_DIR
    kdir = kernel_dir or kernels_dir()
    base, plus, variant = kind.partition("+")
    entries = METHOD_FILES["common"] + METHOD_FILES.get(base, ())
    if plus and f"+{variant}" == STEP_SUFFIX:
        entries += METHOD_FILES["step"] + METHOD_FILES.get(f"step:{base}", ())
    python = [pkg / p for where, p in entries if where == "pkg"]
    kernels = include_closure([kdir / k for where, k in entries if where == "kernels"], [kdir])
    files = python + kernels  # include_closure gives resolved paths
    real = [p.resolve() for p in python] + kernels
    return list(zip(_labels(files, [("kernels", kdir), ("graphcert", pkg)], real), files,
                    strict=True))


def method_digest(kind: str, *, package_dir: Path | None = None,
                  kernel_dir: Path | None = None) -> str:
    """Digest of graphcert's method for `kind` (harness code and harness kernels)."""
    return digest_labelled(method_files(kind, package_dir=package_dir, kernel_dir=kernel_dir),
                           {"kind": kind})


# The file loaders Python's path finder tries, in its order (extension, source, bytecode):
# a folder holding both `m.so` and `m.py` imports the extension, so neither may be digested.
_LOADERS = ((machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
            (machinery.SourceFileLoader, machinery.SOURCE_SUFFIXES),
            (machinery.SourcelessFileLoader, machinery.BYTECODE_SUFFIXES))


def _find_file(parts: Sequence[str], entries: Iterable[object]) -> Path | None:
    """The Python source file `import a.b.c` would run, searched in the folders `entries`
    (sys.path) as Python's path finder does, one level at a time, without importing
    anything: `importlib.util.find_spec` would import (run) each parent package first.

    FileFinder only lists folders and tests files. A regular package or module in any
    entry wins over namespace-package portions, which are merged, as in Python's import.
    """
    locations = [e for e in entries if isinstance(e, str)]
    origin: str | None = None
    for depth in range(len(parts)):
        fullname = ".".join(parts[: depth + 1])
        found = None
        portions: list[str] = []
        for location in locations:
            if not Path(location or ".").is_dir():  # a zip file or a missing entry
                continue
            spec = machinery.FileFinder(location, *_LOADERS).find_spec(fullname)
            if spec is None:
                continue
            if spec.loader is None:  # a portion of a namespace package: keep looking
                portions += list(spec.submodule_search_locations or ())
                continue
            found = spec
            break
        if found is None:
            if not portions:
                return None
            origin, locations = None, portions
            continue
        origin, locations = found.origin, list(found.submodule_search_locations or ())
        if depth < len(parts) - 1 and found.submodule_search_locations is None:
            return None  # a module is not a package: it has no submodules
    if origin is None or not origin.endswith(".py"):
        return None  # a namespace package, an extension or bytecode: no source to digest
    return Path(origin)


def module_location(module: str, *, package_dir: Path | None = None
                    ) -> tuple[Path, Path, Path] | None:
    """(file, search root, local folder) of a dotted module, found without importing it
    or any parent package (a certificate's reference must never run code).

    A graphcert module is looked up under `package_dir` (injectable; default the running
    graphcert); its local folder is its own package's folder, so a built-in's digest
    follows graphcert.workloads only. Any other module is searched on sys.path.
    """
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    if parts[0] == "graphcert":
        pkg = package_dir or PACKAGE_DIR
        path = pkg.joinpath(*parts[1:])
        file = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        return file, pkg.parent, file.parent
    found = _find_file(parts, sys.path)
    if found is None:
        return None
    depth = len(parts) + (1 if found.name == "__init__.py" else 0)
    return found, found.parents[depth - 1], found.parent
