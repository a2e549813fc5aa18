"""Public signatures that take or give `Any`, by package: what crosses a seam between
graphcert's packages unchecked. (`object` is not counted: mypy makes its reader narrow it, so
a function that takes any value, such as a repr for a message, says so honestly with it.)
A public function is one whose name (and its class's) does not start with "_"; `__init__`,
`__call__` and the other dunders count.

    python tools/any_seams.py            # a count per package
    python tools/any_seams.py cuda run   # and every signature of those packages
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOOSE = re.compile(r"\bAny\b")


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _loose(annotation: ast.expr | None) -> bool:
    return annotation is not None and bool(LOOSE.search(ast.unparse(annotation)))


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(node.name):
            out.append((node.name, node))
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            out += [(f"{node.name}.{item.name}", item) for item in node.body
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and _public(item.name)]
    return out


def loose_signatures(root: Path = ROOT) -> dict[str, list[str]]:
    """{package: ["file:line name(param)", ...]} for every loose public signature."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted((root / "graphcert").rglob("*.py")):
        rel = path.relative_to(root / "graphcert")
        package = rel.parts[0].removesuffix(".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, fn in _functions(tree):
            a = fn.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs,
                      *([a.vararg] if a.vararg else []), *([a.kwarg] if a.kwarg else [])]
            for p in params:
                if _loose(p.annotation) and p.arg not in ("self", "cls"):
                    found[package].append(f"{rel}:{fn.lineno} {name}({p.arg}: "
                                          f"{ast.unparse(p.annotation)})")  # type: ignore[arg-type]
            if _loose(fn.returns):
                found[package].append(f"{rel}:{fn.lineno} {name} -> "
                                      f"{ast.unparse(fn.returns)}")  # type: ignore[arg-type]
    return dict(found)


def _imported_names(root: Path) -> dict[str, set[tuple[str, str]]]:
    """{module: {(importing package, name)}}: what each graphcert module's names are imported
    as, and by which top-level package."""
    out: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for path in sorted((root / "graphcert").rglob("*.py")):
        package = path.relative_to(root / "graphcert").parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.startswith("graphcert.") and not node.level:
                out[node.module].update((package, a.name) for a in node.names)
    return out


def crossing(root: Path = ROOT) -> list[str]:
    """The loose signatures another package reaches: its function (or its method's class)
    imported by a module outside the package that defines it. "No Any across a seam" is
    this list being empty; a package's own helpers may still be counted above."""
    imports = _imported_names(root)
    out = []
    for package, rows in loose_signatures(root).items():
        for row in rows:
            file, rest = row.split(":", 1)
            module = "graphcert." + file.removesuffix(".py").replace("/", ".")
            module = module.removesuffix(".__init__")
            name = rest.split(" ", 1)[1].split("(", 1)[0].split(" ->", 1)[0].split(".", 1)[0]
            if any(p != package and n == name for p, n in imports.get(module, ())):
                out.append(row)
    return out


def main() -> None:
    found = loose_signatures()
    for package, rows in sorted(found.items(), key=lambda kv: -len(kv[1])):
        print(f"{package:14} {len(rows):4}")
        if package in sys.argv[1:]:
            print("\n".join(f"    {r}" for r in rows))
    print(f"{'total':14} {sum(len(r) for r in found.values()):4}")
    across = crossing()
    print(f"reached from another package: {len(across)}")
    print("\n".join(f"    {r}" for r in across))


if __name__ == "__main__":
    main()
