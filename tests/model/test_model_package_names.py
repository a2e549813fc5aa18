"""graphcert.model's package-level names are loaded on first use: each name of __all__ is
there, the very object of the module that defines it, and importing one module of the
package (as the certificate readers import graphcert.model.jsontext) loads no other."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import graphcert.model as model

ROOT = Path(__file__).resolve().parents[2]


def test_every_exported_name_is_the_defining_modules_object() -> None:
    assert sorted(model.__all__) == sorted(model._WHERE)
    for name in model.__all__:
        assert getattr(model, name) is getattr(importlib.import_module(model._WHERE[name]), name)


def test_star_import_gives_every_name() -> None:
    space: dict[str, object] = {}
    exec("from graphcert.model import *", space)
    assert set(model.__all__) <= set(space)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        model.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("no AttributeError")


def test_one_module_loads_no_other() -> None:
    code = ("import sys, graphcert.model.jsontext\n"
            "print(sorted(m for m in sys.modules if m.startswith('graphcert.model')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    assert done.stdout.strip() == "['graphcert.model', 'graphcert.model.jsontext']"
