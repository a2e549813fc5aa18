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


# Template arguments that never tell two kernels of one template apart: scalar and pointer
# types, the standard library's and c10's (std::array<char*, 3ul>, c10::Half).
_PLAIN_TYPES = frozenset({"void", "bool", "char", "short", "int", "long", "float", "double",
                          "signed", "unsigned", "half", "__half", "__nv_bfloat16"})
_PLAIN_SPACES = ("std::", "c10::", "at::detail::")


def _top_split(text: str, sep: str = ",") -> list[str]:
    """`text` split at `sep` where no bracket is open."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def _template_args(full: str) -> list[str]:
    """The template arguments of the function's own name (the `<...>` just before its
    parameter list), or [] where there are none or the brackets do not balance."""
    text = full.replace(_ANON, _PLACEHOLDER)
    end = text.rfind(")")
    depth, open_paren = 0, -1
    for i in range(end, -1, -1):  # back to the parameter list's "("
        depth += text[i] == ")"
        depth -= text[i] == "("
        if depth == 0:
            open_paren = i
            break
    if open_paren < 1 or text[open_paren - 1] != ">":
        return []
    depth = 0
    for i in range(open_paren - 1, -1, -1):
        depth += text[i] == ">"
        depth -= text[i] == "<"
        if depth == 0:
            return [a.strip() for a in _top_split(text[i + 1:open_paren - 1])]
    return []


def _op_of(arg: str) -> str | None:
    """The name a template argument gives the kernel's operation (a functor's class, the
    function a lambda is defined in), or None for a number or a plain type."""
    if not arg or arg[0].isdigit() or arg[0] == "-" or arg in ("true", "false"):
        return None
    head = arg
    for stop in "<(":
        head = head.split(stop, 1)[0]
    head = head.strip()
    if " " in head or "*" in head or "&" in head or head.startswith(_PLAIN_SPACES):
        return None
    name = head.rsplit("::", 1)[-1]
    return None if not name or name in _PLAIN_TYPES else name.replace(_PLACEHOLDER, _ANON_SHORT)


def distinguishing_args(raw: str) -> list[str]:
    """What tells apart the kernels of one template: the functor or lambda-holding function
    among its template arguments (`FillFunctor`, `CUDAFunctor_add`, `GeluCUDAKernelImpl` for
    three `vectorized_elementwise_kernel`s), without numbers and plain types."""
    return [op for a in _template_args(demangle(raw)) if (op := _op_of(a)) is not None]


@cache
def short_name(raw: str) -> str:
    """A kernel name for a table cell: namespaces kept, return type dropped, template
    arguments and parameter lists elided, except the template arguments that name the
    operation: `at::native::vectorized_elementwise_kernel<…GeluCUDAKernelImpl…>`, since
    `<…>` alone reads the same for GELU, add and fill. One token: no spaces."""
    name = _elided_name(raw)
    ops = distinguishing_args(raw)
    if ops and name.endswith("<" + ELLIPSIS + ">"):
        return f"{name[:-1]}{','.join(ops)}{ELLIPSIS}>"
    return name


def _elided_name(raw: str) -> str:
    """short_name without the operation: `at::native::vectorized_elementwise_kernel<…>`."""
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
