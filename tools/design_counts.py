"""The design review's counts over graphcert/, printed: files and packages per certificate
kind, branches on a kind's name, `Any`/`object` parameters, `dict[str, Any]` in signatures,
and the modules that read the process environment.

    python tools/design_counts.py [ROOT]     # ROOT: a checkout (default: this one)

A file belongs to a kind when its module path names the kind (or the word its modules use:
"verify" for topology, "profil" for profile), or, with --importers, also when it imports one
that does. The first figure is what a reader opens to find the kind; the second, everything
that touches it.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

KIND_WORDS = {"topology": ("topology", "verify"), "bench": ("bench",), "sweep": ("sweep",),
              "plan": ("plan",), "profile": ("profil",), "record": ("record",),
              "fleet": ("fleet",)}
KIND_NAMES = "topology|bench|sweep|plan|profile|record"
BRANCH = re.compile(rf"""kind\s*(==|!=)\s*["']({KIND_NAMES})["']"""
                    rf"""|kind\s+(not\s+)?in\s+\(["']({KIND_NAMES})""")


def modules(root: Path) -> dict[str, Path]:
    pkg = root / "graphcert"
    return {".".join(p.relative_to(root).with_suffix("").parts): p
            for p in sorted(pkg.rglob("*.py"))}


def imported(tree: ast.Module, name: str) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                base = ".".join(name.split(".")[: -node.level] + [node.module])
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def _spread(files: set[str], mods: dict[str, Path]) -> str:
    packages = {m.rsplit(".", 1)[0] for m in files}
    return f"{len(files):3} files in {len(packages):2} packages"


def is_loose(ann: ast.expr | None) -> bool:
    return ann is not None and ast.unparse(ann) in ("Any", "object", "typing.Any")


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
    mods = modules(root)
    trees = {m: ast.parse(p.read_text(encoding="utf-8")) for m, p in mods.items()}
    for kind, words in KIND_WORDS.items():
        named = {m for m in mods if any(w in m.split(".", 1)[1] for w in words)}
        users = named | {m for m, t in trees.items() if imported(t, m) & named}
        folder = {m for m in named if m.startswith(f"graphcert.kinds.{kind}.")}
        outside = sorted({m.rsplit(".", 1)[0] for m in named - folder})
        print(f"kind {kind:9} {_spread(named, mods)}; {len(folder)} in its folder, the rest in "
              f"{', '.join(p.removeprefix('graphcert.') for p in outside) or '-'}; "
              f"with importers {_spread(users, mods)}")
    branches = sum(len(BRANCH.findall(p.read_text(encoding="utf-8"))) for p in mods.values())
    loose = dict_any = 0
    for t in trees.values():
        for node in ast.walk(t):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
                loose += sum(is_loose(p.annotation) for p in params)
                sig = [p.annotation for p in params] + [node.returns]
                dict_any += any(s is not None and
                                re.search(r"dict\[str, *Any\]", ast.unparse(s)) for s in sig)
    environ = sorted(m for m, p in mods.items()
                     if re.search(r"os\.environ|os\.getenv|environ\.get", p.read_text("utf-8")))
    lines = sum(len(p.read_text("utf-8").splitlines()) for p in mods.values())
    print(f"modules {len(mods)}, lines {lines}")
    print(f"branches on a kind's name: {branches}")
    print(f"parameters typed Any/object: {loose}; "
          f"functions taking or returning dict[str, Any]: {dict_any}")
    print(f"modules reading the environment: {len(environ)} ({', '.join(environ)})")


if __name__ == "__main__":
    main()
