"""What a Python module imports and the kernel-like strings it holds, read from its text
with `ast` (never imported or run): the part of a workload's source digest
(graphcert.cert.digests) that costs most, kept per process and, where a folder is given,
between processes. Pure apart from that folder.
"""

from __future__ import annotations

import ast
import hashlib
import marshal
import re
import sys
from functools import cache
from pathlib import Path

from graphcert.errors import GraphcertError
from graphcert.fileio import atomic_write_bytes
from graphcert.fileread import read_bounded

# A string constant that names a kernel file: followed by the digest like an #include.
KERNEL_NAME = re.compile(r"^[^\n\0]{1,255}\.(cu|cuh|h|hpp)$")

# What one module's text imports and the kernel-like strings it holds, by the sha256 of that
# text: a gate over many certificates of the built-ins digests the same few modules for every
# reference, and parsing them is most of a digest's cost. Keyed by content, so a file edited
# within the process is parsed again; what the imports resolve to is looked up every time.
Parsed = tuple[tuple[tuple[int, str | None, tuple[str, ...]], ...], tuple[str, ...]]
_PARSED: dict[bytes, Parsed] = {}


def parse_imports(source: bytes, filename: str, store: Path | None = None) -> Parsed:
    """(imports, literals) of a module's text. Each import is (level, module, names):
    `import a.b` is (0, None, ("a.b",)); `from ..m import x, y` is (2, "m", ("x", "y")).
    `store`: a folder keeping them between processes, by the same sha256 (see _stored)."""
    key = hashlib.sha256(source).digest()
    known = _PARSED.get(key)
    if known is None and store is not None:
        known = _stored(store, key)
    if known is not None:
        _PARSED[key] = known
        return known
    try:
        tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        parsed: Parsed = ((), ())  # the file is still digested as bytes; nothing to follow
    else:
        parsed = _scan(tree)
    if len(_PARSED) < 4096:
        _PARSED[key] = parsed
    if store is not None:
        _store(store, key, parsed)
    return parsed


# A parse kept between processes is named by the text's sha256 and by what reads it: this
# file (the scan) and Python's version (its grammar); so an entry is never stale, only unused.
_STORE_FORMAT = "graphcert imports 1"
_MAX_STORED_BYTES = 4 * 1024 * 1024


@cache
def _reader_tag() -> str:
    h = hashlib.sha256(_STORE_FORMAT.encode() + sys.version.encode() + b"\0")
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:16]


def _entry(store: Path, key: bytes) -> Path:
    return store / f"{key.hex()[:40]}-{_reader_tag()}.bin"


def _stored(store: Path, key: bytes) -> Parsed | None:
    """The parse kept in `store` for the text of sha256 `key`; None when there is none (or
    it is unreadable, or not of the shape _parse makes)."""
    try:
        found = marshal.loads(read_bounded(_entry(store, key), _MAX_STORED_BYTES,
                                           streams=False))
    except (OSError, GraphcertError, EOFError, ValueError, TypeError):
        return None
    if not (isinstance(found, tuple) and len(found) == 3 and found[0] == _STORE_FORMAT):
        return None
    imports, literals = found[1], found[2]
    if not (isinstance(imports, tuple) and isinstance(literals, tuple)
            and all(isinstance(v, str) for v in literals)
            and all(_is_import(i) for i in imports)):
        return None
    return imports, literals


def _is_import(item: object) -> bool:
    return (isinstance(item, tuple) and len(item) == 3 and type(item[0]) is int
            and (item[1] is None or isinstance(item[1], str)) and isinstance(item[2], tuple)
            and all(isinstance(n, str) for n in item[2]))


def _store(store: Path, key: bytes, parsed: Parsed) -> None:
    try:  # a folder that cannot be written costs the next process a parse, nothing more
        atomic_write_bytes(_entry(store, key), marshal.dumps((_STORE_FORMAT, *parsed)))
    except (OSError, GraphcertError):
        pass


def _scan(tree: ast.AST) -> Parsed:
    """The imports and kernel-like string constants anywhere in `tree` (every node visited,
    as ast.walk does, in a plain loop: ast.walk's generators were most of the time). The
    parser makes nodes of these exact classes, so the class is compared, not isinstance."""
    imports: list[tuple[int, str | None, tuple[str, ...]]] = []
    literals: list[str] = []
    stack: list[ast.AST] = [tree]
    node_class, constant, plain, from_ = ast.AST, ast.Constant, ast.Import, ast.ImportFrom
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is constant:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is str and KERNEL_NAME.match(value):
                literals.append(value)
        elif kind is plain or kind is from_:
            names = tuple(alias.name for alias in node.names)  # type: ignore[attr-defined]
            imports.append((0, None, names) if kind is plain else
                           (node.level or 0, node.module, names))  # type: ignore[attr-defined]
        else:  # neither holds a node that matters here (names, aliases)
            for field in node._fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    stack += [v for v in value if isinstance(v, node_class) and v._fields]
                elif isinstance(value, node_class) and value._fields:
                    stack.append(value)  # leaves without fields (Load, Add) are skipped
    return tuple(imports), tuple(literals)
