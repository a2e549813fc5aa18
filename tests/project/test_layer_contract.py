"""Every top-level module and package of graphcert is named by the layers contract that
`lint-imports` checks (pyproject.toml), so no module escapes the layer rules."""

from __future__ import annotations

import pkgutil
import sys
from pathlib import Path

import graphcert

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _layered() -> set[str]:
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    # the contract over the whole package (the per-kind one has containers)
    (layers,) = [c["layers"] for c in contracts
                 if c["type"] == "layers" and "containers" not in c]
    return {name.strip() for layer in layers for name in layer.split("|")}


def test_every_module_is_in_the_layers_contract() -> None:
    modules = {f"graphcert.{m.name}" for m in pkgutil.iter_modules(graphcert.__path__)}
    assert modules, "no modules found"
    missing = sorted(modules - _layered())
    assert missing == [], f"add these to a layer in pyproject.toml: {missing}"


def test_the_contract_names_only_modules_that_exist() -> None:
    modules = {f"graphcert.{m.name}" for m in pkgutil.iter_modules(graphcert.__path__)}
    assert sorted(_layered() - modules) == []
