"""Kernel names for people: demangled (C++ Itanium ABI) and a short form for tables.

The raw (mangled) name stays what is stored, hashed and printed by `--json`; only views
use these. Demangling is cxxfilt's call into libstdc++'s `__cxa_demangle`, the same code
`c++filt` runs, so names read as every other CUDA tool shows them. A name that is not
mangled (`extern "C"` kernels such as cuBLAS's `nvjet_*` or graphcert's own) comes back
unchanged, and so does any name when demangling is unavailable or fails.
"""

from __future__ import annotations

from functools import cache
from typing import Protocol

ELLIPSIS = "\u2026"
_OPEN = {"<": ">", "(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}
# Spelled out by the demangler, compacted in the short form; a bracket-free placeholder
# keeps it whole while brackets are elided.
_ANON, _ANON_SHORT, _PLACEHOLDER = "(anonymous namespace)", "(anon)", "\x00"


class _Demangler(Protocol):
    def demangle(self, mangled_name: str, external_only: bool = ...) -> str: ...


@cache
def _demangler() -> _Demangler | None:
    """libstdc++'s demangler through cxxfilt, or None where neither can be loaded."""
    try:
        import cxxfilt
    except ImportError:
        return None
    default: _Demangler = cxxfilt.default_demangler
    loaded = isinstance(default, cxxfilt.Demangler)  # tested apart: no narrowing to Any
    if loaded:
        return default
    # cxxfilt looks libstdc++ up through ldconfig, which minimal images may lack; the
    # sonames themselves are stable on every glibc Linux.
    try:
        fallback: _Demangler = cxxfilt.Demangler("libc.so.6", "libstdc++.so.6")
    except OSError:
        return None
    return fallback


@cache
def demangle(raw: str) -> str:
    """The demangled C++ name of `raw`, or `raw` itself if it is not mangled or cannot be."""
    if not raw.startswith("_Z"):
        return raw
    demangler = _demangler()
    if demangler is None:
        return raw
    try:
        return demangler.demangle(raw)
    except Exception:  # noqa: BLE001 - cxxfilt raises several types; a view never fails
        return raw


def _elide(text: str) -> str:
    """Replace the contents of every outermost bracket pair with an ellipsis.

    `f<a, b<c>>(int)` -> `f<…>(…)`. Unbalanced text (an `operator<`) is returned as is.
    """
    out: list[str] = []
    stack: list[str] = []
    for ch in text:
        if ch in _OPEN:
            if not stack:
                out.append(ch + ELLIPSIS)
            stack.append(ch)
        elif ch in _CLOSE:
            if not stack or stack[-1] != _CLOSE[ch]:
                return text
            stack.pop()
            if not stack:
                out.append(ch)
        elif not stack:
            out.append(ch)
    return text if stack else "".join(out)


@cache
def short_name(raw: str) -> str:
    """A kernel name for a table cell: namespaces kept, template arguments and parameter
    lists elided, return type dropped: `at::native::vectorized_elementwise_kernel<…>`."""
    full = demangle(raw)
    if full == raw and not raw.startswith("_Z"):
        return raw  # not a C++ mangled name: nothing to shorten
    text = full.replace(_ANON, _PLACEHOLDER)
    elided = _elide(text)
    if elided == text and "<" in text:
        return full  # brackets did not balance: show it whole rather than wrong
    # Drop the parameter list (and any cv-qualifier after it), then the return type.
    head = elided
    for suffix in (" const", " volatile", " &&", " &"):
        head = head.removesuffix(suffix)
    head = head.removesuffix("(" + ELLIPSIS + ")")
    # The elided name holds no spaces except those around the return type.
    name = head.rsplit(" ", 1)[-1] if head else full
    return name.replace(_PLACEHOLDER, _ANON_SHORT)
